#include "textflag.h"

// REDUCE_Y0_Y3_AX adds the four accumulators' 32-bit lanes into AX.
#define REDUCE_Y0_Y3_AX \
	VPADDD Y1, Y0, Y0 \
	VPADDD Y3, Y2, Y2 \
	VPADDD Y2, Y0, Y0 \
	VEXTRACTI128 $1, Y0, X1 \
	VPADDD X1, X0, X0 \
	VPSHUFD $0x4E, X0, X1 \
	VPADDD X1, X0, X0 \
	VPSHUFD $0xB1, X0, X1 \
	VPADDD X1, X0, X0 \
	VMOVD X0, AX

// func dotInt16AVX2(a, b *int16, n int) int32
// Requires AVX2. Multiplies 16-bit lanes into 32-bit pair sums (VPMADDWD)
// and adds 64 products per iteration in four accumulators, then 16 at a
// time, then the scalar tail. The caller keeps every partial sum within
// int32.
TEXT ·dotInt16AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

loop64:
	CMPQ CX, $64
	JL   loop16
	VMOVDQU (SI), Y4
	VMOVDQU 32(SI), Y5
	VMOVDQU 64(SI), Y6
	VMOVDQU 96(SI), Y7
	VPMADDWD (DI), Y4, Y4
	VPMADDWD 32(DI), Y5, Y5
	VPMADDWD 64(DI), Y6, Y6
	VPMADDWD 96(DI), Y7, Y7
	VPADDD Y4, Y0, Y0
	VPADDD Y5, Y1, Y1
	VPADDD Y6, Y2, Y2
	VPADDD Y7, Y3, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $64, CX
	JMP  loop64

loop16:
	CMPQ CX, $16
	JL   reduce
	VMOVDQU (SI), Y4
	VPMADDWD (DI), Y4, Y4
	VPADDD Y4, Y0, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JMP  loop16

reduce:
	REDUCE_Y0_Y3_AX

tail:
	TESTQ CX, CX
	JE    done
	MOVWLSX (SI), R8
	MOVWLSX (DI), R9
	IMULL R9, R8
	ADDL R8, AX
	ADDQ $2, SI
	ADDQ $2, DI
	DECQ CX
	JMP  tail

done:
	VZEROUPPER
	MOVL AX, ret+24(FP)
	RET

// func dotInt8AVX2(a *int8, b *int16, n int) int32
// Requires AVX2. Widens sixteen 8-bit lanes of a to 16 bits (VPMOVSXBW)
// and multiplies them with b's as dotInt16AVX2 does: half the bytes of a
// read per product.
TEXT ·dotInt8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

loop64:
	CMPQ CX, $64
	JL   loop16
	VPMOVSXBW (SI), Y4
	VPMOVSXBW 16(SI), Y5
	VPMOVSXBW 32(SI), Y6
	VPMOVSXBW 48(SI), Y7
	VPMADDWD (DI), Y4, Y4
	VPMADDWD 32(DI), Y5, Y5
	VPMADDWD 64(DI), Y6, Y6
	VPMADDWD 96(DI), Y7, Y7
	VPADDD Y4, Y0, Y0
	VPADDD Y5, Y1, Y1
	VPADDD Y6, Y2, Y2
	VPADDD Y7, Y3, Y3
	ADDQ $64, SI
	ADDQ $128, DI
	SUBQ $64, CX
	JMP  loop64

loop16:
	CMPQ CX, $16
	JL   reduce
	VPMOVSXBW (SI), Y4
	VPMADDWD (DI), Y4, Y4
	VPADDD Y4, Y0, Y0
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JMP  loop16

reduce:
	REDUCE_Y0_Y3_AX

tail:
	TESTQ CX, CX
	JE    done
	MOVBLSX (SI), R8
	MOVWLSX (DI), R9
	IMULL R9, R8
	ADDL R8, AX
	ADDQ $1, SI
	ADDQ $2, DI
	DECQ CX
	JMP  tail

done:
	VZEROUPPER
	MOVL AX, ret+24(FP)
	RET

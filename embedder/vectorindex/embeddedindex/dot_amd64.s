#include "textflag.h"

// func dotAVX2(a, b *float32, n int) float32
// Requires AVX2 and FMA. Sums 32 floats per iteration in four 8-lane
// accumulators, then 8 at a time, then the scalar tail.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loop32:
	CMPQ CX, $32
	JL   loop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  loop32

loop8:
	CMPQ CX, $8
	JL   reduce
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop8

reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0

tail:
	TESTQ CX, CX
	JE    done
	VMOVSS (SI), X1
	VFMADD231SS (DI), X1, X0
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  tail

done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

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
	VPADDD Y1, Y0, Y0
	VPADDD Y3, Y2, Y2
	VPADDD Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, AX

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

package badgerstore

import "testing"

func TestMapsLine(t *testing.T) {
	tests := []struct {
		line       string
		start, end uintptr
		path       string
		ok         bool
	}{
		{"7f3a00000000-7f3a00400000 r--s 00000000 08:01 123456                     /data/badger/000012.sst", 0x7f3a00000000, 0x7f3a00400000, "/data/badger/000012.sst", true},
		{"7f3a00000000-7f3a00001000 r--s 00000000 08:01 99 /home/a dm/My Games/badger/000001.sst", 0x7f3a00000000, 0x7f3a00001000, "/home/a dm/My Games/badger/000001.sst", true},
		{"c000000000-c004000000 rw-p 00000000 00:00 0 ", 0xc000000000, 0xc004000000, "", true},
		{"c000000000-c004000000 rw-p 00000000 00:00 0", 0, 0, "", false},
		{"zz-c004000000 rw-p 00000000 00:00 0 x", 0, 0, "", false},
		{"c004000000-c000000000 rw-p 00000000 00:00 0 x", 0, 0, "", false},
		{"", 0, 0, "", false},
	}
	for _, tt := range tests {
		start, end, path, ok := mapsLine(tt.line)
		if start != tt.start || end != tt.end || path != tt.path || ok != tt.ok {
			t.Errorf("mapsLine(%q) = %#x, %#x, %q, %v; want %#x, %#x, %q, %v", tt.line, start, end, path, ok, tt.start, tt.end, tt.path, tt.ok)
		}
	}
}

package ellipsis

import "testing"

func TestTruncate(t *testing.T) {
	cases := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"fits", "hello", 10, "hello"},
		{"exact", "hello", 5, "hello"},
		{"cut", "hello world", 8, "hello w…"},
		{"trailing space", "hello world", 7, "hello…"},
		{"one", "hello", 1, "…"},
		{"zero", "hello", 0, ""},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			if got := Truncate(c.in, c.max); got != c.want {
				t.Errorf("Truncate(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
			}
		})
	}
}

func TestMiddle(t *testing.T) {
	cases := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"fits", "main.go", 10, "main.go"},
		{"path", "/home/ana/src/app/main.go", 12, "/home/…in.go"},
		{"even", "abcdefghij", 5, "ab…ij"},
		{"zero", "abc", 0, ""},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			if got := Middle(c.in, c.max); got != c.want {
				t.Errorf("Middle(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
			}
		})
	}
}

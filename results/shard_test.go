package results

import "testing"

func TestParseShard(t *testing.T) {
	for _, ok := range []struct {
		in   string
		want Shard
	}{{"1/1", Shard{1, 1}}, {"2/4", Shard{2, 4}}, {" 4/4 ", Shard{4, 4}}} {
		if got, err := ParseShard(ok.in); err != nil || got != ok.want {
			t.Errorf("ParseShard(%q) = %v, %v", ok.in, got, err)
		}
	}
	for _, bad := range []string{"0/3", "4/3", "a/b", "3", "1/0", "-1/3", "1/-3", ""} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}

package configtest

import "testing"

func TestNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		msg, field string
		want       bool
	}{
		{"x: QueueSize -1 is negative", "QueueSize", true},
		{"x: Environments: name \"A\"", "Environments", true},
		{"x: QueueSizes -1", "QueueSize", false}, // another field that begins the same
		{"x: BatchSize -1 is negative", "QueueSize", false},
		{"y: QueueSize -1 is negative", "QueueSize", false}, // another package's prefix
		{"x: QueueSize", "QueueSize", false},                // says nothing about it
	}
	for _, tt := range tests {
		if got := names(tt.msg, "x: ", tt.field); got != tt.want {
			t.Errorf("names(%q, %q) = %v, want %v", tt.msg, tt.field, got, tt.want)
		}
	}
}

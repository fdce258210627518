package provision

import "testing"

func TestArchitecture(t *testing.T) {
	for name, want := range map[string]string{"i8g.large": "arm64", "i8g.4xlarge": "arm64", "c7g.2xlarge": "arm64", "im4gn.large": "arm64", "is4gen.xlarge": "arm64",
		"i4i.large": "x86_64", "i7i.2xlarge": "x86_64", "c6i.2xlarge": "x86_64", "m6i.2xlarge": "x86_64", "c6in.large": "x86_64"} {
		if got := Architecture(name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

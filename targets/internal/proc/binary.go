package proc

import (
	"fmt"
	"os"
	"os/exec"
)

// FindBinary resolves a server's binary: bin if given (a path, or a name
// looked up on $PATH), else name on $PATH, else the first executable of
// fallbacks (sbin is often not on a user's PATH). It returns notFound when
// there is none.
func FindBinary(name, bin string, fallbacks []string, notFound error) (string, error) {
	if bin != "" {
		p, err := exec.LookPath(bin)
		if err != nil {
			return "", fmt.Errorf("%s binary %q cannot be used: %w", name, bin, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, p := range fallbacks {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", notFound
}

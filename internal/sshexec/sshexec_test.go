package sshexec

import (
	"errors"
	"io"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func signer(t *testing.T) ssh.Signer {
	s, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Commands run with /bin/sh and report their exit status; a Handler takes
// the commands it claims; an unknown key cannot log in.
func TestServer(t *testing.T) {
	client, other := signer(t), signer(t)
	s, err := Listen("127.0.0.1:0", Config{
		HostKey: signer(t),
		Accept:  func(k ssh.PublicKey) bool { return string(k.Marshal()) == string(client.PublicKey().Marshal()) },
		Handle: func(c string) (Handler, bool) {
			if c != "hello" {
				return nil, false
			}
			return func(stdout, _ io.Writer, _ <-chan struct{}) uint32 { io.WriteString(stdout, "handled"); return 7 }, true
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dial := func(k ssh.Signer) (*ssh.Client, error) {
		return ssh.Dial("tcp", s.Addr(), &ssh.ClientConfig{User: "u", Auth: []ssh.AuthMethod{ssh.PublicKeys(k)}, HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	}
	if c, err := dial(other); err == nil {
		c.Close()
		t.Fatal("an unknown key logged in")
	}
	c, err := dial(client)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	run := func(cmd string) (string, int) {
		sess, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		out, err := sess.Output(cmd)
		var ee *ssh.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitStatus()
		} else if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return string(out), 0
	}
	if out, st := run("echo hi; exit 3"); strings.TrimSpace(out) != "hi" || st != 3 {
		t.Errorf("sh: %q, status %d", out, st)
	}
	if out, st := run("kill -TERM $$"); out != "" || st != 128+15 {
		t.Errorf("killed: %q, status %d", out, st)
	}
	if out, st := run("hello"); out != "handled" || st != 7 {
		t.Errorf("handler: %q, status %d", out, st)
	}
	if got := s.Commands(); len(got) != 3 || got[2] != "hello" {
		t.Errorf("commands %q", got)
	}
}

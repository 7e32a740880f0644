package testenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procStat is what a test needs of /proc/PID/stat.
type procStat struct {
	pid, ppid, pgrp int
	state           string
}

// scanProcs calls f for every process in /proc (ErrNoProc where there is
// none). A process that is gone meanwhile is passed over.
func scanProcs(f func(procStat)) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return ErrNoProc
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and ')', so
		// read after the last ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fs := strings.Fields(s[i+1:])
		if len(fs) < 3 {
			continue
		}
		ppid, err1 := strconv.Atoi(fs[1])
		pgrp, err2 := strconv.Atoi(fs[2])
		if err1 == nil && err2 == nil {
			f(procStat{pid: pid, ppid: ppid, pgrp: pgrp, state: fs[0]})
		}
	}
	return nil
}

// GroupMembers lists the pids whose process group is pgid, zombies
// included (Linux /proc; none elsewhere): what a message about a group that
// outlived its stop should name.
func GroupMembers(pgid int) []int {
	var out []int
	_ = scanProcs(func(p procStat) {
		if p.pgrp == pgid {
			out = append(out, p.pid)
		}
	})
	return out
}

// ProcsMentioning lists, as "PID: command line", the processes whose
// command line contains s — a server's private directory, which nginx's
// master and haproxy keep in their arguments (Linux /proc; none elsewhere).
func ProcsMentioning(s string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

package image

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The image's /usr/bin/df: GNU coreutils df (src/df.c), which the real
// image has from its ubi9-minimal base, for what the framework asks of it
// (`df -P -B1 /var/lib/scylla`: the data directory's filesystem when the
// image has no node_exporter). It reads statfs of each FILE and the mount
// table (/proc/self/mountinfo) as df does; options it does not implement
// are refused, naming them, rather than answered differently.

// dfOptions is what the command line asked for.
type dfOptions struct {
	posix     bool   // -P, --portability: POSIX_MODE
	blockSize uint64 // -B, --block-size (default 1024)
	files     []string
}

// dfUsageError is df's usage(EXIT_FAILURE): the message, then "Try 'df
// --help' for more information." on stderr, status 1.
type dfUsageError struct{ msg string }

func (e *dfUsageError) Error() string { return e.msg }

func dfRefuse(format string, a ...any) error {
	return &dfUsageError{msg: fmt.Sprintf(format, a...)}
}

// dfImplemented is said with every refusal of an option GNU df has.
const dfImplemented = "the image double's df implements -P (--portability), -B SIZE (--block-size=SIZE, SIZE a number of bytes) and FILE operands"

// dfNotImplemented are GNU df's options (src/df.c long_options and
// short_options "aB:iF:hHklmPTt:vx:") that the double refuses.
var dfNotImplemented = map[string]bool{"a": true, "all": true, "i": true, "inodes": true, "F": true, "h": true, "human-readable": true,
	"H": true, "si": true, "k": true, "l": true, "local": true, "m": true, "T": true, "print-type": true, "t": true, "type": true,
	"x": true, "exclude-type": true, "v": true, "output": true, "sync": true, "no-sync": true, "total": true, "help": true, "version": true}

// parseDf parses df's command line as getopt_long does for the options
// the double implements: clustered short options ("-PB1"), "-B SIZE",
// "--block-size=SIZE" or "--block-size SIZE", unambiguous long-option
// prefixes, and "--" ending the options.
func parseDf(args []string) (dfOptions, error) {
	o := dfOptions{blockSize: 1024}
	setBlock := func(s string) error {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			return dfRefuse("invalid -B argument '%s' (%s)", s, dfImplemented)
		}
		o.blockSize = n
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			o.files = append(o.files, args[i+1:]...)
			return o, nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			long := dfLong(name)
			switch long {
			case "portability":
				if hasVal {
					return o, dfRefuse("option '--portability' doesn't allow an argument")
				}
				o.posix = true
			case "block-size":
				if !hasVal {
					if i+1 >= len(args) {
						return o, dfRefuse("option '--block-size' requires an argument")
					}
					i++
					val = args[i]
				}
				if err := setBlock(val); err != nil {
					return o, err
				}
			case "":
				return o, dfRefuse("unrecognized option '%s'", a)
			default:
				return o, dfRefuse("option '--%s' is not implemented (%s)", long, dfImplemented)
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				c := a[j : j+1]
				switch {
				case c == "P":
					o.posix = true
				case c == "B":
					val := a[j+1:]
					if val == "" {
						if i+1 >= len(args) {
							return o, dfRefuse("option requires an argument -- 'B'")
						}
						i++
						val = args[i]
					}
					if err := setBlock(val); err != nil {
						return o, err
					}
					j = len(a)
				case dfNotImplemented[c]:
					return o, dfRefuse("option '-%s' is not implemented (%s)", c, dfImplemented)
				default:
					return o, dfRefuse("invalid option -- '%s'", c)
				}
			}
		default:
			o.files = append(o.files, a)
		}
	}
	return o, nil
}

// dfLong resolves a long option or an unambiguous prefix of one to its
// full name: "" when unknown (or ambiguous).
func dfLong(name string) string {
	all := []string{"all", "block-size", "inodes", "human-readable", "si", "local", "output", "portability", "print-type",
		"sync", "no-sync", "total", "type", "exclude-type", "help", "version"}
	var match string
	for _, l := range all {
		if l == name {
			return l
		}
		if name != "" && strings.HasPrefix(l, name) {
			if match != "" {
				return ""
			}
			match = l
		}
	}
	return match
}

// dfRow is one filesystem of the table, in bytes.
type dfRow struct {
	source, target        string
	blockSize             uint64 // the filesystem's fragment size (fsu_blocksize)
	blocks, bfree, bavail uint64
}

// DfMain runs df with args (argv[1:]) and returns its exit status.
func DfMain(args []string, stdout, stderr io.Writer) int {
	o, err := parseDf(args)
	if err != nil {
		fmt.Fprintf(stderr, "df: %v\nTry 'df --help' for more information.\n", err)
		return 1
	}
	if len(o.files) == 0 {
		fmt.Fprintf(stderr, "df: listing every file system is not implemented: give a FILE (%s)\n", dfImplemented)
		return 1
	}
	if !o.posix && o.blockSize != 1 && o.blockSize != 1024 {
		fmt.Fprintf(stderr, "df: -B %d without -P is not implemented (%s)\n", o.blockSize, dfImplemented)
		return 1
	}
	mounts, _ := readMountinfo("/proc/self/mountinfo")
	status := 0
	var rows []dfRow
	for _, f := range o.files {
		r, err := dfEntry(f, mounts)
		if err != nil {
			// error (0, errno, "%s", quotef (name)).
			fmt.Fprintf(stderr, "df: %s: %s\n", f, errnoText(err))
			status = 1
			continue
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		if status == 0 {
			fmt.Fprintln(stderr, "df: no file systems processed")
		}
		return 1
	}
	io.WriteString(stdout, formatDf(o, rows))
	return status
}

// errnoText is strerror's text of a syscall error.
func errnoText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	if en, ok := err.(syscall.Errno); ok {
		s := en.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}

// dfEntry is get_entry/get_point: the filesystem FILE is on, its mount
// entry found by the longest mount point that is a prefix of FILE's
// resolved name and on the same device (the last such entry: an
// over-mount hides what it covers), its usage from statfs of FILE.
func dfEntry(file string, mounts []mountEntry) (dfRow, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(file, &st); err != nil {
		return dfRow{}, err
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(file, &fs); err != nil {
		return dfRow{}, err
	}
	bs := uint64(fs.Frsize)
	if bs == 0 {
		bs = uint64(fs.Bsize)
	}
	r := dfRow{source: "-", blockSize: bs, blocks: fs.Blocks, bfree: fs.Bfree, bavail: fs.Bavail}
	resolved, err := filepath.EvalSymlinks(file)
	if err == nil {
		resolved, err = filepath.Abs(resolved)
	}
	if err == nil {
		best := -1
		for i, m := range mounts {
			if under(resolved, m.target) && (best < 0 || len(m.target) >= len(mounts[best].target)) {
				best = i
			}
		}
		if best >= 0 {
			var mst syscall.Stat_t
			if syscall.Stat(mounts[best].target, &mst) == nil && mst.Dev == st.Dev {
				r.source, r.target = mounts[best].source, mounts[best].target
				return r, nil
			}
		}
	}
	// find_mount_point: walk up while the device stays the same.
	r.target = findMountPoint(file, st.Dev)
	return r, nil
}

func under(path, dir string) bool {
	return dir == "/" || path == dir || strings.HasPrefix(path, dir+"/")
}

func findMountPoint(file string, dev uint64) string {
	dir, err := filepath.Abs(file)
	if err != nil {
		return file
	}
	for dir != "/" {
		parent := filepath.Dir(dir)
		var st syscall.Stat_t
		if syscall.Stat(parent, &st) != nil || st.Dev != dev {
			return dir
		}
		dir = parent
	}
	return "/"
}

// mountEntry is one line of /proc/self/mountinfo (proc(5)).
type mountEntry struct{ source, target, fstype string }

func readMountinfo(path string) ([]mountEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMountinfo(f), nil
}

// parseMountinfo reads "ID PARENT MAJ:MIN ROOT TARGET OPTS [TAGS...] -
// FSTYPE SOURCE SUPEROPTS" lines, octal escapes (\040) decoded.
func parseMountinfo(r io.Reader) []mountEntry {
	var out []mountEntry
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 2 {
			continue
		}
		out = append(out, mountEntry{source: unescapeMount(b[1]), target: unescapeMount(a[4]), fstype: b[0]})
	}
	return out
}

func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// formatDf is get_header, get_dev's cells and print_table: columns
// separated by one space, widths the larger of the field's minimum
// (Filesystem 14, block fields 5, percent 4) and its widest cell, numbers
// right-aligned, the last column unpadded.
func formatDf(o dfOptions, rows []dfRow) string {
	sizeHeader, pctHeader := fmt.Sprintf("%d-blocks", o.blockSize), "Capacity"
	if !o.posix {
		// DEFAULT_MODE: human_readable of the block size with human_B ("1B", "1K").
		sizeHeader, pctHeader = "1B-blocks", "Use%"
		if o.blockSize == 1024 {
			sizeHeader = "1K-blocks"
		}
	}
	table := [][]string{{"Filesystem", sizeHeader, "Used", "Available", pctHeader, "Mounted on"}}
	for _, r := range rows {
		used := r.blocks - r.bfree
		table = append(table, []string{r.source, scaled(r.blocks, r.blockSize, o.blockSize), scaled(used, r.blockSize, o.blockSize),
			scaled(r.bavail, r.blockSize, o.blockSize), percentUsed(used, r.bavail), r.target})
	}
	width := []int{14, 5, 5, 5, 4, 0}
	right := []bool{false, true, true, true, true, false}
	for _, row := range table {
		for c, cell := range row {
			width[c] = max(width[c], len(cell))
		}
	}
	var b strings.Builder
	for _, row := range table {
		for c, cell := range row {
			if c > 0 {
				b.WriteByte(' ')
			}
			fill := width[c] - len(cell)
			if right[c] {
				b.WriteString(strings.Repeat(" ", fill))
			}
			b.WriteString(cell)
			if !right[c] && c+1 < len(row) {
				b.WriteString(strings.Repeat(" ", fill))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// scaled is human_readable without autoscaling: n blocks of in bytes in
// units of out bytes, rounded up (human_ceiling, the default).
func scaled(n, in, out uint64) string {
	if in == out {
		return strconv.FormatUint(n, 10)
	}
	if in%out == 0 {
		return strconv.FormatUint(n*(in/out), 10)
	}
	total := n * in
	return strconv.FormatUint(total/out+boolU(total%out != 0), 10)
}

// percentUsed is df's PCENT_FIELD: used / (used + available), rounded up.
func percentUsed(used, avail uint64) string {
	total := used + avail
	if total == 0 {
		return "-"
	}
	u100 := used * 100
	return strconv.FormatUint(u100/total+boolU(u100%total != 0), 10) + "%"
}

func boolU(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

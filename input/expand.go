package input

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// StdinName is the input name that reads standard input.
const StdinName = "-"

// Kind says what an input is, which decides how it is identified.
type Kind int

const (
	// File is a regular file: identified by its resolved path.
	File Kind = iota + 1
	// Stdin is standard input ("-"): identified by a fingerprint of its head.
	Stdin
	// Pipe is a named pipe (FIFO), an anonymous pipe given as a path
	// (/dev/fd/63 from <(...), /dev/stdin) or a character device: read once,
	// as a stream, identified like standard input.
	Pipe
)

func (k Kind) String() string {
	switch k {
	case File:
		return "file"
	case Stdin:
		return "stdin"
	case Pipe:
		return "pipe"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Input is one thing to read.
type Input struct {
	// Name is the path as the user gave it or as the walk found it
	// (logs/a.log), for messages and the summary.
	Name string
	// Path is what Open opens: the resolved absolute path of a file, the
	// path as given of a pipe, "-" for standard input.
	Path string
	Kind Kind
	// ID is the canonical identity of a file, "file:" + Path, set by Expand.
	// Standard input and pipes have none until they are opened: use
	// Reader.ID, which is set for every kind.
	ID string
	// Size is a regular file's size when it was listed (for progress), -1
	// for the other kinds.
	Size int64
}

// Options adjust Expand.
type Options struct {
	// Exclude lists directories that are never read, whatever is named: the
	// pipeline passes the -out dataset directory, so a walk over a directory
	// that holds it never reads the dataset's own files back. They are
	// compared by resolved absolute path (and by device and inode), so any
	// spelling or symlink of them is excluded too. A directory that does not
	// exist (yet) excludes nothing.
	Exclude []string
}

// Skipped is an entry left out on purpose, for the summary.
type Skipped struct {
	Name   string // as named or walked
	Reason string // one of the Skip constants
	Detail string // for a person: what it is, or what it duplicates
}

// Reasons an entry is skipped. They are stable: the summary counts them.
const (
	SkipHidden      = "hidden"         // a name starting with "." inside a walked directory (file or directory)
	SkipNotLog      = "not_a_log"      // documentation or code in a walked directory (.md, .go, .json5, .txt~)
	SkipSymlinkLoop = "symlink_loop"   // a symlink that leads back into a directory being walked, or to itself
	SkipBrokenLink  = "broken_symlink" // a symlink in a walked directory whose target does not exist
	SkipNotRegular  = "not_regular"    // a socket, FIFO or device inside a walked directory (name it to read it)
	SkipExcluded    = "excluded"       // inside a directory of Options.Exclude (the dataset)
	SkipDuplicate   = "duplicate"      // the same file, pipe or directory as an input already listed
)

// Expand turns what the user names into the inputs to read, in order, and
// the entries it left out on purpose:
//
//   - "-" is standard input;
//   - a regular file is taken as is (whatever its name);
//   - a directory is walked recursively, its files in path order; names
//     starting with "." (files and directories) and documentation or code
//     (isLogName) are skipped, as are sockets, FIFOs and devices found in it;
//   - symlinks are followed, to files and to directories; a link that loops
//     back into a directory being walked is skipped, not followed forever;
//   - a path that does not exist but holds *, ? or [ is a glob pattern,
//     and each match is taken as if named;
//   - a FIFO, a pipe given as a path (/dev/fd/63 from <(cat log),
//     /dev/stdin) or a character device is a Pipe input. It is never opened
//     here: opening a FIFO waits for its writer, and closing it again would
//     lose what the writer sent.
//
// The same file or pipe named twice (a, ./a, /abs/a, a symlink to it, a hard
// link, or again inside a walked directory) is listed once; later
// occurrences come back as skipped duplicates.
//
// A path that does not exist, a pattern that matches nothing, a named
// symlink that is broken or loops, a socket, or an entry that cannot be read
// is an error naming it and saying what to do. No input at all (every entry
// skipped) is not an error: the caller reports it.
func Expand(paths []string, opt Options) ([]Input, []Skipped, error) {
	x := &expander{seen: map[string]string{}, dirs: map[string]bool{}}
	for _, ex := range opt.Exclude {
		x.addExclude(ex)
	}
	for _, p := range paths {
		if p == StdinName {
			x.stdin()
			continue
		}
		if _, err := os.Lstat(p); err != nil && strings.ContainsAny(p, "*?[") {
			matches, gerr := filepath.Glob(p)
			if gerr != nil {
				return nil, nil, fmt.Errorf("input pattern %s is malformed: %w (check its brackets)", p, gerr)
			}
			if len(matches) == 0 {
				return nil, nil, fmt.Errorf("input pattern %s matched no files: check the pattern and the directory it names", p)
			}
			for _, m := range matches {
				if err := x.named(m); err != nil {
					return nil, nil, err
				}
			}
			continue
		}
		if err := x.named(p); err != nil {
			return nil, nil, err
		}
	}
	return x.inputs, x.skipped, nil
}

type expander struct {
	inputs  []Input
	skipped []Skipped
	seen    map[string]string // key of a listed file or pipe -> its name
	dirs    map[string]bool   // keys of the directories walked
	exclude []string          // resolved absolute paths
	exKeys  map[string]bool
}

func (x *expander) addExclude(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	c, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return // does not exist: holds nothing to read
	}
	x.exclude = append(x.exclude, c)
	if fi, err := os.Stat(c); err == nil {
		if x.exKeys == nil {
			x.exKeys = map[string]bool{}
		}
		x.exKeys[keyOf(fi, c)] = true
	}
}

// excluded says whether a resolved path is, or is inside, an excluded
// directory.
func (x *expander) excluded(canon string) bool {
	for _, ex := range x.exclude {
		if within(canon, ex) {
			return true
		}
	}
	return false
}

func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}

func (x *expander) skip(name, reason, detail string) {
	x.skipped = append(x.skipped, Skipped{Name: name, Reason: reason, Detail: detail})
}

// list adds an input unless the same file or pipe is already listed.
func (x *expander) list(in Input, key string) {
	if first, ok := x.seen[key]; ok {
		x.skip(in.Name, SkipDuplicate, "the same input as "+first)
		return
	}
	x.seen[key] = in.Name
	x.inputs = append(x.inputs, in)
}

func (x *expander) stdin() {
	key := "stdin"
	if fi, err := os.Stdin.Stat(); err == nil {
		key = keyOf(fi, "/dev/stdin")
	}
	x.list(Input{Name: StdinName, Path: StdinName, Kind: Stdin, Size: -1}, key)
}

// canonical is the absolute path of p with every symlink resolved.
func canonical(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// named handles a path the user gave (or a glob matched).
func (x *expander) named(p string) error {
	li, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("input %s does not exist: check the path", p)
		}
		return fmt.Errorf("input %s cannot be read: %w (check its permissions)", p, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		switch {
		case li.Mode()&fs.ModeSymlink != 0 && errors.Is(err, syscall.ELOOP):
			return fmt.Errorf("input %s is a symbolic link that loops back on itself: fix the link", p)
		case li.Mode()&fs.ModeSymlink != 0 && errors.Is(err, fs.ErrNotExist):
			target, _ := os.Readlink(p)
			return fmt.Errorf("input %s is a symbolic link to %s, which does not exist: fix the link or leave it out", p, target)
		}
		return fmt.Errorf("input %s cannot be read: %w (check its permissions)", p, err)
	}
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		c, err := canonical(p)
		if err != nil {
			return fmt.Errorf("input %s cannot be resolved: %w", p, err)
		}
		if x.excluded(c) || x.exKeys[keyOf(fi, c)] {
			x.skip(p, SkipExcluded, "the dataset directory, never read as input")
			return nil
		}
		return x.walkRoot(p, c, fi)
	case mode.IsRegular():
		c, err := canonical(p)
		if err != nil {
			// A regular file without a resolvable name (/dev/stdin on a
			// deleted file): read it as a stream.
			return x.pipe(p, fi)
		}
		if x.excluded(c) {
			x.skip(p, SkipExcluded, "inside the dataset directory, never read as input")
			return nil
		}
		return x.file(p, c, fi)
	case mode&fs.ModeSocket != 0:
		return fmt.Errorf("input %s is a socket: name a file, a directory, a pipe or - for standard input", p)
	default: // FIFO, pipe, character or block device
		return x.pipe(p, fi)
	}
}

func (x *expander) file(name, canon string, fi fs.FileInfo) error {
	f, err := os.Open(canon) // a regular file: opening it never blocks
	if err != nil {
		return fmt.Errorf("input %s cannot be opened: %w (check its permissions)", name, err)
	}
	f.Close()
	x.list(Input{Name: name, Path: canon, Kind: File, ID: "file:" + canon, Size: fi.Size()}, keyOf(fi, canon))
	return nil
}

func (x *expander) pipe(name string, fi fs.FileInfo) error {
	if err := readable(name); err != nil {
		return fmt.Errorf("input %s cannot be read: %w (check its permissions)", name, err)
	}
	x.list(Input{Name: name, Path: name, Kind: Pipe, Size: -1}, keyOf(fi, name))
	return nil
}

// found is a file a walk found, listed once the walk is sorted.
type found struct {
	name, canon string
	fi          fs.FileInfo
}

func (x *expander) walkRoot(name, canon string, fi fs.FileInfo) error {
	var files []found
	var skipped []Skipped
	if err := x.walk(name, canon, fi, nil, &files, &skipped); err != nil {
		return err
	}
	// Path order, as a walk of the tree lists them.
	sort.SliceStable(files, func(i, j int) bool { return files[i].name < files[j].name })
	sort.SliceStable(skipped, func(i, j int) bool { return skipped[i].Name < skipped[j].Name })
	x.skipped = append(x.skipped, skipped...)
	for _, f := range files {
		if err := x.file(f.name, f.canon, f.fi); err != nil {
			return err
		}
	}
	return nil
}

// walk lists the files under a directory, following symlinks. ancestors
// holds the keys of the directories being walked, to detect a loop.
func (x *expander) walk(name, canon string, fi fs.FileInfo, ancestors []string, files *[]found, skipped *[]Skipped) error {
	key := keyOf(fi, canon)
	skip := func(n, reason, detail string) {
		*skipped = append(*skipped, Skipped{Name: n, Reason: reason, Detail: detail})
	}
	if x.exKeys[key] || x.excluded(canon) {
		skip(name, SkipExcluded, "the dataset directory, never read as input")
		return nil
	}
	for _, a := range ancestors {
		if a == key {
			skip(name, SkipSymlinkLoop, "leads back to "+canon+", a directory being walked")
			return nil
		}
	}
	if x.dirs[key] {
		skip(name, SkipDuplicate, "the same directory as one already walked ("+canon+")")
		return nil
	}
	x.dirs[key] = true
	entries, err := os.ReadDir(name)
	if err != nil {
		return fmt.Errorf("input directory %s cannot be read: %w (check its permissions)", name, err)
	}
	ancestors = append(ancestors, key)
	for _, ent := range entries { // in name order
		child := filepath.Join(name, ent.Name())
		if strings.HasPrefix(ent.Name(), ".") {
			what := "a hidden file"
			if ent.IsDir() {
				what = "a hidden directory"
			}
			skip(child, SkipHidden, what)
			continue
		}
		link := ent.Type()&fs.ModeSymlink != 0
		var cfi fs.FileInfo
		if link {
			cfi, err = os.Stat(child)
			switch {
			case err == nil:
			case errors.Is(err, syscall.ELOOP):
				skip(child, SkipSymlinkLoop, "a symbolic link that loops back on itself")
				continue
			case errors.Is(err, fs.ErrNotExist):
				target, _ := os.Readlink(child)
				skip(child, SkipBrokenLink, "a symbolic link to "+target+", which does not exist")
				continue
			default:
				return fmt.Errorf("input %s cannot be read: %w (check its permissions)", child, err)
			}
		} else if cfi, err = ent.Info(); err != nil {
			return fmt.Errorf("input %s cannot be read: %w (it changed during the walk?)", child, err)
		}
		ccanon := filepath.Join(canon, ent.Name())
		if link {
			if ccanon, err = canonical(child); err != nil {
				return fmt.Errorf("input %s cannot be resolved: %w", child, err)
			}
		}
		mode := cfi.Mode()
		switch {
		case mode.IsDir():
			if err := x.walk(child, ccanon, cfi, ancestors, files, skipped); err != nil {
				return err
			}
		case !mode.IsRegular():
			skip(child, SkipNotRegular, "a "+modeName(mode)+", read only when named")
		case !isLogName(ent.Name()):
			skip(child, SkipNotLog, "documentation or code, by its extension")
		case x.excluded(ccanon):
			skip(child, SkipExcluded, "inside the dataset directory, never read as input")
		default:
			*files = append(*files, found{name: child, canon: ccanon, fi: cfi})
		}
	}
	return nil
}

func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// isLogName keeps documentation and code out of a directory walk: a
// directory of samples holds a README beside its logs.
func isLogName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".go", ".json5", ".txt~":
		return false
	}
	return true
}

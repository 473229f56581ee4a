// Package input expands what the user names into inputs with a canonical
// identity, opens each exactly once, undoes compression and sniffs the head
// without losing a byte.
//
// # Expanding
//
// Expand takes files, directories (walked recursively, files in path order),
// glob patterns, "-" for standard input, and paths that are pipes, FIFOs or
// character devices (/dev/stdin, /dev/fd/63 from `ingest <(cat log)`).
// Symlinks are followed, to files and to directories; a walk remembers the
// directories it is inside by device and inode, so a link back into one is
// reported (symlink_loop) instead of followed forever. A FIFO or pipe is
// never opened while expanding: opening a FIFO waits for its writer, and
// closing it again would lose what the writer sent.
//
// What a walk leaves out on purpose comes back as Skipped with a stable
// reason, for the summary to count: hidden (a name starting with "."),
// not_a_log (.md, .go, .json5, .txt~), symlink_loop, broken_symlink,
// not_regular (a socket, FIFO or device found in a directory: name it to
// read it), excluded (inside Options.Exclude, where the pipeline puts the
// -out dataset, so a walk over a directory that holds the dataset never
// reads its Parquet back), duplicate (the same file, pipe or directory as
// one already listed, by device and inode, so a, ./a, /abs/a, a symlink or
// a hard link to it, and the walk of its directory are read once). A path
// that does not exist or a pattern that matches nothing is an error naming
// it and saying what to do.
//
// # Identity
//
// Every input has a canonical identity (Reader.ID; Input.ID for files),
// which the dataset manifest and exchange ids use, so that a rerun replaces
// exactly the rows of the inputs it reads whatever their spelling:
//
//   - a regular file is "file:" + its absolute path with every symlink
//     resolved. a, ./a, /abs/a, a symlink to a and a walk of a's directory
//     all give one identity; a file moved or renamed is a new source.
//   - standard input and pipes (FIFOs, <(...), devices) have no name that
//     lasts, so their identity is their content: "stdin:sha256:" + the hex
//     SHA-256 of their first line (the first line break at or past byte
//     64; the first decode.SniffBytes, 64 KiB, when there is none by then;
//     all of a shorter input) of the raw bytes as they arrive, before
//     decompression (Fingerprint, IDPrefix). It is known as soon as that
//     line has arrived, before anything is decoded, which the dataset needs
//     to know which rows a run replaces, and it does not depend on how fast
//     the stream sends it: Open waits for the whole prefix, never for a
//     pause, so a quiet live stream (behind tail -f) is read as soon as its
//     first line is in. A log piped again after it grew starts with the
//     same line, so its new run replaces its earlier one instead of adding
//     to it; two different logs with the same first line would share one
//     (log lines start with times and session ids, so this is not
//     expected; a pretty-printed document's first lines can be alike: give
//     such inputs as files). Empty input gets the fixed identity of the
//     empty prefix (stdin:sha256:e3b0c442…). The same bytes
//     through "-" and through <(...) are the same source.
//
// # Opening and reading
//
// Open opens an input once. Its Reader hands out the decompressed bytes
// (gzip, zlib or zstd, recognised by magic bytes whatever the name says),
// with the head (up to decode.SniffBytes) available by Head or Peek before
// it is read, for format detection and for learning the side of a log; the
// same Reader is then decoded, so sniffing never loses a byte of a pipe.
// It counts raw (compressed) and decompressed bytes (RawBytes, Bytes) for
// progress.
//
// A compressed input that fails to decompress (a corrupt header, a stream
// cut short with or without decodable bytes before the cut, corrupt data in
// the middle) is never read as empty or as shorter than it is: Head, Peek
// and Read return a *CorruptError, with the compressed and decompressed
// offsets where it failed and a message that says what to do; the bytes
// decompressed before the failure come first. The pipeline quarantines it.
package input

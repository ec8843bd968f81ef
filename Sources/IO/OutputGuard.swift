/// "An output is never an input": the check every command makes before it opens anything for writing.
///
/// The output path is looked up (symbolic links followed, so a link to an input counts as the input,
/// and a hard link has the input's inode) and compared by device and inode with every input file and
/// every directory being read; its parent directory is compared with those directories too, so an
/// output cannot land inside a set being read (a shard directory, a state directory).
public enum OutputGuard {
    /// Throws `.outputIsInput` when `output` is one of `inputs`, is one of `directories`, or lies
    /// directly inside one of `directories`; `.notARegularFile` when it exists as a FIFO, device,
    /// socket or directory. A missing output is fine.
    public static func check(
        output: FilePath, inputs: [FileIdentity], directories: [FileIdentity] = []
    ) throws(IOError) {
        if let existing = try FileIdentity.current(output) {
            for input in inputs + directories where existing.isSameFile(as: input) {
                throw IOError(
                    .outputIsInput, "\(output) is an input of this command; writing it would destroy what is read",
                    path: output.description)
            }
            // rename(2) would replace a FIFO, a device node or a socket, and fail late on a directory.
            guard existing.isRegularFile else {
                throw IOError(
                    .notARegularFile, "\(output) exists and is not a regular file; it is never replaced",
                    path: output.description)
            }
        }
        guard !directories.isEmpty, let parent = try FileIdentity.current(output.directory) else { return }
        for directory in directories where parent.isSameFile(as: directory) {
            throw IOError(
                .outputIsInput, "\(output) lies inside \(output.directory), the directory this command reads",
                path: output.description)
        }
    }
}

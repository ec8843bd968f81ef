import AetherIO
import AetherReceiver
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The store's writers own one descriptor each and close it exactly once, whatever mix of `commit()`,
/// `discard()` and the end of the last reference ends them. The check needs no tracing: as soon as a writer
/// closes its descriptor the test takes the same number for a placeholder, then ends the writer every other
/// way; a second close by the writer would close the placeholder, which `fcntl(F_GETFD)` then reports.
@Suite struct BlobWriterDescriptorTests {
    /// A store in a fresh temporary directory, removed by `remove()`.
    struct Scratch {
        let root: String
        let store: DirectoryBlobStore

        init() throws {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("aether-fd-\(UUID().uuidString)")
            store = try DirectoryBlobStore(root: FilePath(path.path))
            // `/proc/self/fd` shows resolved paths.
            root = path.resolvingSymlinksInPath().path
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }

        /// The descriptors of this process open on a file under the store (read from `/proc/self/fd`).
        func openDescriptors() -> [Int32] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return names.compactMap { name in
                guard let descriptor = Int32(name),
                    let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                    target.hasPrefix(root + "/")
                else { return nil }
                return descriptor
            }
        }
    }

    /// Runs `end` (which must close the writer's one descriptor), takes that number for a placeholder, runs
    /// `rest` (every other way to end the writer), and returns whether the placeholder survived. Another thread
    /// of the test process may take the number first; then the round is played again.
    static func placeholderSurvives(
        _ scratch: Scratch, open: () throws -> any BlobWriter, end: (any BlobWriter) throws -> Void,
        rest: (any BlobWriter) -> Void
    ) throws -> Bool {
        let source = unsafe Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(source >= 0)
        defer { _ = Glibc.close(source) }
        for _ in 0..<20 {
            let descriptor: Int32
            let placeholder: Int32
            do {
                let writer = try open()
                let owned = scratch.openDescriptors()
                try #require(owned.count == 1)
                descriptor = owned[0]
                try end(writer)
                #expect(!scratch.openDescriptors().contains(descriptor))
                // The lowest free number at or above the writer's: its own when nothing took it in between.
                placeholder = fcntl(source, F_DUPFD_CLOEXEC, descriptor)
                rest(writer)
            }  // The writer's last reference is gone here (deinit).
            guard placeholder == descriptor else {
                if placeholder >= 0 { _ = Glibc.close(placeholder) }
                continue
            }
            let survived = fcntl(placeholder, F_GETFD) != -1
            if survived { _ = Glibc.close(placeholder) }
            return survived
        }
        Issue.record("another thread took the freed descriptor number in every round")
        return false
    }

    @Test func aCommittedStagedBlobIsNotClosedAgainByDiscardOrDeinit() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let id = try UploadID("aaaaaaaaaaaaaaaaaaaaaaaaaa")
        var index = 0
        let survived = try Self.placeholderSurvives(
            scratch,
            open: {
                index += 1
                let writer = try scratch.store.stage(.chunk(id, index: index))
                try writer.write([1, 2, 3])
                return writer
            },
            end: { try $0.commit() }, rest: { $0.discard() })
        #expect(survived)
    }

    @Test func aDiscardedStagedBlobIsNotClosedAgainByASecondDiscardOrDeinit() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let id = try UploadID("baaaaaaaaaaaaaaaaaaaaaaaaa")
        let survived = try Self.placeholderSurvives(
            scratch,
            open: {
                let writer = try scratch.store.stage(.chunk(id, index: 0))
                try writer.write([4, 5])
                return writer
            },
            end: { $0.discard() }, rest: { $0.discard() })
        #expect(survived)
    }

    @Test func aCommittedAppendIsNotClosedAgainByDiscardOrDeinit() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let id = try UploadID("caaaaaaaaaaaaaaaaaaaaaaaaa")
        var offset: Int64 = 0
        let survived = try Self.placeholderSurvives(
            scratch,
            open: {
                let writer = try scratch.store.append(to: .stream(id), at: offset)
                try writer.write([6, 7, 8, 9])
                offset += 4
                return writer
            },
            end: { try $0.commit() }, rest: { $0.discard() })
        #expect(survived)
        // The discard after the commit left the committed bytes alone.
        #expect(try scratch.store.size(of: .stream(id)) == offset)
    }

    @Test func aDiscardedAppendIsNotClosedAgainByASecondDiscardOrDeinit() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let id = try UploadID("daaaaaaaaaaaaaaaaaaaaaaaaa")
        let survived = try Self.placeholderSurvives(
            scratch,
            open: {
                let writer = try scratch.store.append(to: .stream(id), at: 0)
                try writer.write([1])
                return writer
            },
            end: { $0.discard() }, rest: { $0.discard() })
        #expect(survived)
        #expect(try scratch.store.size(of: .stream(id)) == 0)
    }
}

import Foundation
import Testing

@testable import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct FilePathTests {
    @Test func aUTF8PathKeepsItsBytesAndShowsUnchanged() {
        let path = FilePath("/tmp/caf\u{e9}/données.bin")
        #expect(path.bytes == Array("/tmp/caf\u{e9}/données.bin".utf8))
        #expect(path.description == "/tmp/caf\u{e9}/données.bin")
        #expect(path.isValidUTF8)
    }

    @Test func bytesThatAreNotUTF8AreKeptAndShownEscapedLosslessly() throws {
        // Latin-1 "café" and a lone 0xFF: String would turn both into U+FFFD and open another file.
        let latin1 = try FilePath(bytes: Array("/tmp/caf".utf8) + [0xE9])
        let ff = try FilePath(bytes: Array("/tmp/".utf8) + [0xFF, 0xFE])
        #expect(latin1.bytes.last == 0xE9)
        #expect(latin1.description == "/tmp/caf\\xE9")
        #expect(ff.description == "/tmp/\\xFF\\xFE")
        #expect(!ff.isValidUTF8)
        // Overlong forms and surrogates are not UTF-8 either.
        #expect(try FilePath(bytes: [0xC0, 0xAF]).description == "\\xC0\\xAF")
        #expect(try FilePath(bytes: [0xED, 0xA0, 0x80]).description == "\\xED\\xA0\\x80")
        // A backslash is escaped, so the text of two different paths never collides.
        #expect(FilePath("a\\xFF").description == "a\\\\xFF")
        #expect(FilePath("a\\xFF").description != ff.description)
    }

    @Test func aNULByteIsAnInvalidArgument() {
        let error = #expect(throws: IOError.self) { try FilePath(bytes: [0x61, 0x00, 0x62]) }
        #expect(error?.code == .invalidArgument)
    }

    @Test(arguments: [
        ("a/b/c", "a/b", "c"), ("/a", "/", "a"), ("name", ".", "name"), ("a/b/", "a", "b"), ("/a//b", "/a", "b"),
    ])
    func directoryAndLastComponentSplitThePath(path: String, directory: String, name: String) {
        #expect(FilePath(path).directory == FilePath(directory))
        #expect(FilePath(path).lastComponent == FilePath(name))
        #expect(FilePath(path).directory.appending(FilePath(path).lastComponent).lastComponent == FilePath(name))
    }

    @Test func aFileWithANonUTF8NameIsReadByItsBytes() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        // Two files whose names differ only in bytes that String would repair to the same U+FFFD.
        let first = try FilePath(bytes: Array(files.path("x").utf8) + [0xFF])
        let second = try FilePath(bytes: Array(files.path("x").utf8) + [0xFE])
        for (path, content) in [(first, [UInt8](repeating: 1, count: 100)), (second, [2, 2])] {
            try AtomicFile.write(content, to: path)
        }
        let (digest, _) = try FileDigester.digest(path: first)
        #expect(digest.sha256 == SHA256.hash([UInt8](repeating: 1, count: 100)))
        #expect(try GuardedFile(path: second).readAll(maximumBytes: 10) == [2, 2])
        #expect(digest.path.hasSuffix("x\\xFF"))
    }
}

@Suite struct OutputGuardTests {
    @Test func anOutputThatIsTheInputAHardLinkOrASymlinkToItIsRefused() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let input = try files.write("input", [1, 2, 3])
        let identity = try #require(try FileIdentity.current(FilePath(input)))
        #expect(unsafe link(input, files.path("hard")) == 0)
        #expect(unsafe symlink(input, files.path("soft")) == 0)
        for output in [input, files.path("hard"), files.path("soft")] {
            let error = #expect(throws: IOError.self) {
                try OutputGuard.check(output: FilePath(output), inputs: [identity])
            }
            #expect(error?.code == .outputIsInput)
        }
        // A new name, and another file, are fine.
        try OutputGuard.check(output: FilePath(files.path("new")), inputs: [identity])
        let other = try files.write("other", [9])
        try OutputGuard.check(output: FilePath(other), inputs: [identity])
    }

    @Test func anOutputInsideADirectoryBeingReadIsRefused() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let set = files.path("set")
        try FileManager.default.createDirectory(atPath: set, withIntermediateDirectories: false)
        let directory = try #require(try FileIdentity.current(FilePath(set)))
        let error = #expect(throws: IOError.self) {
            try OutputGuard.check(output: FilePath(set + "/new.bin"), inputs: [], directories: [directory])
        }
        #expect(error?.code == .outputIsInput)
        let itself = #expect(throws: IOError.self) {
            try OutputGuard.check(output: FilePath(set), inputs: [], directories: [directory])
        }
        #expect(itself?.code == .outputIsInput)
        try OutputGuard.check(output: FilePath(files.path("beside.bin")), inputs: [], directories: [directory])
    }

    @Test func anExistingOutputThatIsNotARegularFileIsNeverReplaced() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let fifo = files.path("fifo")
        #expect(unsafe mkfifo(fifo, 0o600) == 0)
        for output in [fifo, "/dev/null"] {
            let error = #expect(throws: IOError.self) { try OutputGuard.check(output: FilePath(output), inputs: []) }
            #expect(error?.code == .notARegularFile)
        }
    }
}

@Suite struct GuardedFileReadAllTests {
    @Test func aFileLargerThanTheLimitIsRefusedBeforeItIsRead() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("big", [UInt8](repeating: 7, count: 5000))
        #expect(try GuardedFile(path: FilePath(path)).readAll(maximumBytes: 5000).count == 5000)
        let error = #expect(throws: IOError.self) {
            try GuardedFile(path: FilePath(path)).readAll(maximumBytes: 4999)
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test(.timeLimit(.minutes(1))) func aFIFOWithNoWriterIsRefusedAtOnce() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let fifo = files.path("fifo")
        #expect(unsafe mkfifo(fifo, 0o600) == 0)
        let error = #expect(throws: IOError.self) { try GuardedFile(path: FilePath(fifo)).readAll(maximumBytes: 10) }
        #expect(error?.code == .notARegularFile)
    }
}

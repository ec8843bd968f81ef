import Foundation
import Testing

@testable import aether_bench

/// Children of `aether-bench e2e`: a client past its deadline is stopped and counted at the deadline; an exit
/// status and the output come back; a server that exits before it is ready is an error naming it.
@Suite struct BenchChildTests {
    static func logs() -> String { NSTemporaryDirectory() + "aether-child-\(UUID().uuidString)" }

    @Test func aClientStillRunningAtTheDeadlineIsStoppedAndCountedAtTheDeadline() async throws {
        let child = try BenchChild(["/bin/sleep", "30"], logs: Self.logs())
        let deadline = child.started + 0.3
        let finish = await child.finish(deadline: deadline)
        #expect(finish.stopped)
        #expect(finish.seconds == deadline - child.started)
        // SIGTERM, or SIGKILL two seconds later where the test runner's children ignore SIGTERM.
        #expect(finish.status == 128 + SIGTERM || finish.status == 128 + SIGKILL)
        #expect(!child.process.isRunning)
    }

    @Test func aClientThatEndsInTimeReportsItsStatusAndOutput() async throws {
        let child = try BenchChild(["/bin/sh", "-c", "echo done; exit 3"], logs: Self.logs())
        let finish = await child.finish(deadline: .infinity)
        #expect(!finish.stopped)
        #expect(finish.status == 3)
        #expect(finish.output == "done\n")
    }

    @Test func waitingForALineReturnsTheFirstLineWithThePrefix() async throws {
        let child = try BenchChild(
            ["/bin/sh", "-c", "echo starting; echo ready 4242; exec sleep 30"], logs: Self.logs())
        defer { child.stop() }
        #expect(try await child.waitForLine(startingWith: "ready", timeout: 20, what: "sh") == "ready 4242")
    }

    @Test func aServerThatExitsBeforeItIsReadyIsAnErrorWithItsLastWords() async throws {
        let child = try BenchChild(["/bin/sh", "-c", "echo 'address in use' >&2; exit 1"], logs: Self.logs())
        let error = await #expect(throws: BenchError.self) {
            try await child.waitForLine(startingWith: "ready", timeout: 20, what: "the peer")
        }
        #expect(error?.description.contains("the peer exited: address in use") == true)
    }

    @Test func aServerIsStoppedWhenItsStdinClosesOrBySignal() async throws {
        let child = try BenchChild(["/bin/cat"], logs: Self.logs())
        child.send("hello\n")
        child.stop()
        #expect(!child.process.isRunning)
        #expect(child.output == "hello\n")
    }
}

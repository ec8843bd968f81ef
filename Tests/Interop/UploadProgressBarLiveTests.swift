import AetherIO
import Foundation
import Testing

/// The progress bar in a real terminal: `aether upload` runs in a detached tmux session on a private server socket,
/// and the screen is read with `tmux capture-pane` ten times a second while it runs. The whole scenario runs in one
/// shell: a tmux server started by a process that has already exited does not outlive it here.
@Suite(.serialized) struct UploadProgressBarLiveTests: SeededContent {
    static let script = """
        socket="$1"; out="$2"; shift 2
        tmux -L "$socket" new-session -d -x 160 -y 20 "$@" || exit 90
        i=0
        while [ $i -lt 1200 ]; do
            screen=$(tmux -L "$socket" capture-pane -p)
            printf '%s\\n@@\\n' "$screen" >> "$out"
            case "$screen" in *exit=*) break ;; esac
            sleep 0.1
            i=$((i + 1))
        done
        tmux -L "$socket" kill-server
        rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$socket"
        """

    @Test func theBarDrawsAdvancesAndEndsAtOneHundredPercent() throws {
        let peer = try IETFPeerProcess.get()
        let (path, state, content) = try UploadCommandLiveTests.file(8 << 20, seed: 91)
        let captures = path + ".screens"
        let command = [
            SessionLive.aetherPath, "upload", path, peer.creationURL("normal"), "--state-dir", state, "--chunk-size",
            "16K", "--parallel", "1",
        ].map { "'\($0)'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", Self.script, "sh", "aether-bar-\(UUID().uuidString.prefix(8))", captures, "sh", "-c",
            command + "; echo exit=$?; sleep 60",
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try SessionLive.wait("the tmux scenario", timeout: 180) { !process.isRunning }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let screens = try String(contentsOfFile: captures, encoding: .utf8).components(separatedBy: "\n@@\n")
        var percents: [Int] = []
        for screen in screens {
            for line in screen.split(separator: "\n") where line.hasPrefix("[") {
                guard let end = line.firstIndex(of: "]") else { continue }
                let rest = line[line.index(after: end)...].drop { $0 == " " }
                if let percent = Int(rest.prefix { $0.isNumber }), percents.last != percent { percents.append(percent) }
            }
        }
        let last = screens.last { $0.contains("exit=") } ?? ""
        #expect(last.contains("exit=0"), "\(last)")
        #expect(last.contains("done: \(content.count) bytes"))
        #expect(last.contains("ETA") && last.contains("verified") && last.contains("tier"))
        #expect(percents.last == 100, "\(percents)")
        #expect(percents.count >= 3, "the bar never advanced: \(percents)")
        #expect(zip(percents, percents.dropFirst()).allSatisfy { $0 < $1 }, "\(percents)")
    }
}

import AetherUploader

extension UploadRun {
    /// `--follow` and `--follow-idle`: the follow options, or nil without `--follow`. `--parity` is refused with
    /// `--follow` (parity groups need the chunk count); dedup is switched off (the content id needs the whole file).
    /// `followed` forces following (`aether resume` of an upload started with `--follow`).
    static func followOptions(
        _ parsed: Arguments, configuration: inout UploadConfiguration, followed: Bool = false
    ) throws -> FollowOptions? {
        guard followed || parsed.flag("follow") else {
            if parsed.option("follow-idle") != nil {
                throw Arguments.UsageError(description: "--follow-idle needs --follow")
            }
            return nil
        }
        if parsed.flag("parity") {
            throw Arguments.UsageError(
                description: "--parity cannot be used with --follow: parity groups need the whole file's chunk count")
        }
        configuration.parity = false
        configuration.flags.parity = false
        configuration.flags.dedup = false
        var options = FollowOptions()
        if let seconds = try followIdle(parsed) { options.idleSeconds = seconds }
        return options
    }

    /// `--follow-idle SECONDS` (0...86400), nil when not given.
    static func followIdle(_ parsed: Arguments) throws -> Double? {
        guard let text = parsed.option("follow-idle") else { return nil }
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds <= 86_400 else {
            throw Arguments.UsageError(description: "--follow-idle must be a number of seconds from 0 to 86400")
        }
        return seconds
    }
}

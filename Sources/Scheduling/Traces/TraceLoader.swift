/// Reads the throughput trace formats of the project's `Traces/` (see its SOURCES.md); each family differs:
///
/// - Pensieve "cooked" text (`hsdpa_norway_3g`): `<time_s>\t<Mbit/s>`, irregular times; a sample's rate holds until
///   the next timestamp (the last one for the median interval).
/// - Lumos5G text (`lte_lumos5g_minneapolis`, `nr5g_lumos5g_minneapolis`): `<time_s> <Mbit/s>`, 1 s per line.
/// - SABRE JSON (`lte_belgium_ghent`, `*.json`): an array of `{"duration_ms", "bandwidth_kbps", "latency_ms"}`.
/// - NumPy `.npy` (`nr5g_throughput_prediction`): 1-D `<i8`/`<f8`, 1 s per value, Mbit/s. Only `y_true_*` files are
///   traces; `y_pred_*` are the artifact's predictions for them (see `referencePredictions`).
/// - 5Gophers CSV (`throughput_data.csv`): one trace per (protocol, carrier, connections, server, run), ordered by
///   `seq_num` (seconds).
public enum TraceLoader {
    /// Every trace in the subfolders of `directory`, families sorted by name, traces by name within a family.
    public static func loadAll(directory: String) throws(SchedulingError) -> [ThroughputTrace] {
        guard let families = SystemCalls.listDirectory(directory) else {
            throw SchedulingError(.unreadableSource, "trace directory \(directory) cannot be listed")
        }
        var traces: [ThroughputTrace] = []
        for family in families {
            let folder = directory + "/" + family
            guard let files = SystemCalls.listDirectory(folder) else { continue }
            for file in files {
                traces += try load(path: folder + "/" + file, family: family)
            }
        }
        return traces
    }

    /// The traces in one file (several for the 5Gophers CSV, none for prediction files and unknown names).
    public static func load(path: String, family: String) throws(SchedulingError) -> [ThroughputTrace] {
        let file = String(path.split(separator: "/").last ?? Substring(path))
        if file.hasPrefix(".") || file.hasSuffix(".md") { return [] }
        guard let bytes = SystemCalls.readFile(path, limit: 64 << 20) else {
            throw SchedulingError(.unreadableSource, "trace file \(path) cannot be read")
        }
        if file.hasSuffix(".npy") {
            guard file.hasPrefix("y_true") else { return [] }
            let values = try parseNpy(bytes, path: path)
            return [trace(family: family, name: file, perSecond: values)]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        if file.hasSuffix(".json") { return [try parseSabre(text, family: family, name: file, path: path)] }
        if file.hasSuffix(".csv") { return try parseGophers(text, family: family, path: path) }
        return [try parseTimeSeries(text, family: family, name: file, path: path)]
    }

    /// The artifact's prediction files for a `y_true_<id>.npy` trace: `[("hm", values), ("GDBT", values)]`.
    public static func referencePredictions(directory: String, trueFile: String) throws(SchedulingError)
        -> [(String, [Double])]
    {
        guard trueFile.hasPrefix("y_true_") else { return [] }
        let id = trueFile.dropFirst("y_true_".count)
        var result: [(String, [Double])] = []
        for kind in ["hm", "GDBT"] {
            let path = directory + "/y_pred_\(kind)_" + id
            guard let bytes = SystemCalls.readFile(path, limit: 64 << 20) else { continue }
            result.append((kind, try parseNpy(bytes, path: path)))
        }
        return result
    }

    // MARK: - Formats

    static func parseTimeSeries(_ text: String, family: String, name: String, path: String) throws(SchedulingError)
        -> ThroughputTrace
    {
        var points: [(Double, Double)] = []
        for (index, line) in text.split(whereSeparator: \.isNewline).enumerated() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
            if fields.isEmpty { continue }
            guard fields.count >= 2, let time = Double(fields[0]), let rate = Double(fields[1]), time.isFinite,
                rate.isFinite, rate >= 0
            else {
                throw SchedulingError(.unreadableSource, "\(path):\(index + 1): expected `<time> <Mbit/s>`")
            }
            points.append((time, rate))
        }
        guard !points.isEmpty else { throw SchedulingError(.unreadableSource, "\(path): no samples") }
        var gaps: [Double] = []
        for i in 1..<max(1, points.count) where points[i].0 > points[i - 1].0 {
            gaps.append(points[i].0 - points[i - 1].0)
        }
        gaps.sort()
        let typical = gaps.isEmpty ? 1 : gaps[gaps.count / 2]
        var samples: [ThroughputTrace.Sample] = []
        let origin = points[0].0
        for (i, point) in points.enumerated() {
            let next = i + 1 < points.count ? points[i + 1].0 : point.0 + typical
            let duration = next > point.0 ? next - point.0 : typical
            // Finite times far apart (±1e308) still overflow a difference to infinity.
            guard duration.isFinite, (point.0 - origin).isFinite, typical.isFinite else {
                throw SchedulingError(.unreadableSource, "\(path):\(i + 1): time out of range")
            }
            samples.append(.init(start: point.0 - origin, duration: duration, megabitsPerSecond: point.1))
        }
        return ThroughputTrace(family: family, name: name, samples: samples)
    }

    static func parseSabre(_ text: String, family: String, name: String, path: String) throws(SchedulingError)
        -> ThroughputTrace
    {
        // The objects are flat and hold only integers: read `"key": number` pairs object by object.
        var samples: [ThroughputTrace.Sample] = []
        var clock = 0.0
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw SchedulingError(.unreadableSource, "\(path): unterminated object")
            }
            let body = rest[rest.index(after: open)..<close]
            var fields: [String: Double] = [:]
            for pair in body.split(separator: ",") {
                let parts = pair.split(separator: ":", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let key = parts[0].filter { $0 != "\"" && !$0.isWhitespace }
                fields[key] = Double(parts[1].filter { !$0.isWhitespace })
            }
            // Double("inf") parses, so finiteness is checked here, and again for the running clock.
            guard let durationMs = fields["duration_ms"], let kbps = fields["bandwidth_kbps"], durationMs > 0,
                kbps >= 0, durationMs.isFinite, kbps.isFinite, (clock + durationMs / 1000).isFinite
            else {
                throw SchedulingError(.unreadableSource, "\(path): object \(samples.count) lacks duration/bandwidth")
            }
            samples.append(.init(start: clock, duration: durationMs / 1000, megabitsPerSecond: kbps / 1000))
            clock += durationMs / 1000
            rest = rest[rest.index(after: close)...]
        }
        guard !samples.isEmpty else { throw SchedulingError(.unreadableSource, "\(path): no samples") }
        return ThroughputTrace(family: family, name: name, samples: samples)
    }

    static func parseGophers(_ text: String, family: String, path: String) throws(SchedulingError) -> [ThroughputTrace]
    {
        let lines = text.split(whereSeparator: \.isNewline)
        guard let header = lines.first else { throw SchedulingError(.unreadableSource, "\(path): empty") }
        let columns = header.split(separator: ",").map(String.init)
        guard let seqColumn = columns.firstIndex(of: "seq_num"),
            let rateColumn = columns.firstIndex(of: "throughput_mbps")
        else {
            throw SchedulingError(.unreadableSource, "\(path): header lacks seq_num/throughput_mbps")
        }
        var runs: [String: [(Int, Double)]] = [:]
        var order: [String] = []
        for (index, line) in lines.dropFirst().enumerated() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == columns.count, let seq = Int(fields[seqColumn]),
                let rate = Double(fields[rateColumn]), rate.isFinite, rate >= 0
            else {
                throw SchedulingError(.unreadableSource, "\(path):\(index + 2): malformed row")
            }
            let key = fields.indices.filter { $0 != seqColumn && $0 != rateColumn }.map { String(fields[$0]) }
                .joined(separator: "-")
            if runs[key] == nil { order.append(key) }
            runs[key, default: []].append((seq, rate))
        }
        return order.map { key in
            let points = (runs[key] ?? []).sorted { $0.0 < $1.0 }
            return trace(family: family, name: key, perSecond: points.map(\.1))
        }
    }

    static func parseNpy(_ bytes: [UInt8], path: String) throws(SchedulingError) -> [Double] {
        let magic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]
        guard bytes.count >= 10, Array(bytes[0..<6]) == magic else {
            throw SchedulingError(.unreadableSource, "\(path): not a .npy file")
        }
        let major = bytes[6]
        let headerLength: Int
        let headerStart: Int
        if major == 1 {
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
            headerStart = 10
        } else {
            guard bytes.count >= 12 else { throw SchedulingError(.unreadableSource, "\(path): short header") }
            headerLength = (0..<4).reduce(0) { $0 | Int(bytes[8 + $1]) << (8 * $1) }
            headerStart = 12
        }
        guard headerStart + headerLength <= bytes.count else {
            throw SchedulingError(.unreadableSource, "\(path): header past end of file")
        }
        let header = String(decoding: bytes[headerStart..<headerStart + headerLength], as: UTF8.self)
        let isInt = header.contains("'<i8'")
        guard isInt || header.contains("'<f8'"), header.contains("'fortran_order': False") else {
            throw SchedulingError(.unreadableSource, "\(path): only little-endian 1-D int64/float64 arrays are read")
        }
        let data = bytes[(headerStart + headerLength)...]
        guard data.count % 8 == 0 else { throw SchedulingError(.unreadableSource, "\(path): truncated data") }
        var values: [Double] = []
        values.reserveCapacity(data.count / 8)
        var index = data.startIndex
        while index < data.endIndex {
            var raw: UInt64 = 0
            for k in 0..<8 { raw |= UInt64(data[index + k]) << (8 * UInt64(k)) }
            values.append(isInt ? Double(Int64(bitPattern: raw)) : Double(bitPattern: raw))
            index += 8
        }
        if let shape = header.split(separator: "(").dropFirst().first?.split(separator: ",").first,
            let count = Int(shape.filter(\.isNumber)), count != values.count
        {
            throw SchedulingError(.unreadableSource, "\(path): shape says \(count) values, file holds \(values.count)")
        }
        return values
    }

    private static func trace(family: String, name: String, perSecond values: [Double]) -> ThroughputTrace {
        let samples = values.enumerated().map { index, value in
            ThroughputTrace.Sample(
                start: Double(index), duration: 1, megabitsPerSecond: value.isFinite ? max(0, value) : 0)
        }
        return ThroughputTrace(family: family, name: name, samples: samples)
    }
}

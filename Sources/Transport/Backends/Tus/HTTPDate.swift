/// The three date forms RFC 9110 section 5.6.7 obliges a recipient to accept (IMF-fixdate, the obsolete
/// RFC 850 form and asctime), as seconds since 1970-01-01T00:00:00Z. Used for tus `Upload-Expires`.
package enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let shortDays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT` or `Sun Nov  6 08:49:37 1994`; nil for
    /// anything else (including an impossible date such as 31 Feb).
    package static func parse(_ text: String) -> Int64? {
        let value = text.trimmingASCIISpaces()
        if let comma = value.firstIndex(of: ",") {
            let day = String(value[..<comma])
            let rest = value[value.index(after: comma)...]
            guard rest.first == " " else { return nil }
            let fields = rest.dropFirst().split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 3 || fields.count == 5, fields.last == "GMT" else { return nil }
            if shortDays.contains(day), fields.count == 5 {
                // IMF-fixdate: day-name "," SP 2DIGIT SP month SP 4DIGIT SP time SP "GMT"
                guard fields[0].count == 2, fields[3].count == 8, fields[2].count == 4,
                    let dayOfMonth = number(fields[0]), let month = months.firstIndex(of: String(fields[1])),
                    let year = number(fields[2])
                else { return nil }
                return seconds(year: year, month: month + 1, day: dayOfMonth, time: fields[3])
            }
            if longDays.contains(day), fields.count == 3 {
                // rfc850-date: day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time SP "GMT"
                let date = fields[0].split(separator: "-", omittingEmptySubsequences: false)
                guard date.count == 3, date[0].count == 2, date[2].count == 2, fields[1].count == 8,
                    let dayOfMonth = number(date[0]), let month = months.firstIndex(of: String(date[1])),
                    let shortYear = number(date[2])
                else { return nil }
                let year = shortYear < 70 ? 2000 + shortYear : 1900 + shortYear
                return seconds(year: year, month: month + 1, day: dayOfMonth, time: fields[1])
            }
            return nil
        }
        // asctime-date: day-name SP month SP ( 2DIGIT / ( SP DIGIT )) SP time SP 4DIGIT
        let bytes = Array(value.utf8)
        guard bytes.count == 24, bytes[3] == 0x20, bytes[7] == 0x20, bytes[10] == 0x20, bytes[19] == 0x20,
            shortDays.contains(String(decoding: bytes[0..<3], as: UTF8.self)),
            let month = months.firstIndex(of: String(decoding: bytes[4..<7], as: UTF8.self))
        else { return nil }
        let dayText = bytes[8] == 0x20 ? bytes[9..<10] : bytes[8..<10]
        guard let dayOfMonth = number(String(decoding: dayText, as: UTF8.self)),
            let year = number(String(decoding: bytes[20..<24], as: UTF8.self))
        else { return nil }
        return seconds(
            year: year, month: month + 1, day: dayOfMonth, time: String(decoding: bytes[11..<19], as: UTF8.self))
    }

    /// IMF-fixdate of `seconds` since 1970 (the form a server must send).
    package static func format(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let timeOfDay = seconds - days * 86_400
        let (year, month, day) = CivilDate.civil(fromDays: days)
        let weekday = Int(((days % 7) + 7 + 3) % 7)  // 1970-01-01 was a Thursday (index 3 from Monday)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(shortDays[weekday]), \(two(day)) \(months[Int(month) - 1]) \(year) "
            + "\(two(timeOfDay / 3600)):\(two(timeOfDay / 60 % 60)):\(two(timeOfDay % 60)) GMT"
    }

    private static func number(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.count <= 4, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    private static func seconds(year: Int, month: Int, day: Int, time: some StringProtocol) -> Int64? {
        let parts = time.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 }), let hour = number(parts[0]),
            let minute = number(parts[1]), let second = number(parts[2]), hour < 24, minute < 60, second <= 60,
            day >= 1, day <= CivilDate.daysInMonth(year: Int64(year), month: Int64(month))
        else { return nil }
        return CivilDate.days(year: Int64(year), month: Int64(month), day: Int64(day)) * 86_400 + Int64(hour * 3600)
            + Int64(minute * 60) + Int64(second)
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs (HTTP's OWS).
    func trimmingASCIISpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
            let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return "" }
        return String(scalars[first...last])
    }
}

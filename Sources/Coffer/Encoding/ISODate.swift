import Foundation

/// Dates as ISO 8601 text (`2026-11-22T08:07:57.123Z`), exact in both directions: what
/// exports, dumps and query results write for `Date` properties and what selectors and
/// imports read.
///
/// A stored date is a `Double` of seconds since 2001-01-01 UTC. `string(seconds:)` writes
/// at least three fraction digits and as many more as it takes for `seconds(from:)` to give
/// back the very same `Double` (so an export and an import never move a date by a
/// nanosecond). Dates outside the years 1...9999, and fractions that would need more than
/// 40 digits, have no such text: callers write the number of seconds instead.
///
/// Calendar arithmetic is the proleptic Gregorian calendar in UTC (days from 1970-01-01 by
/// the civil-from-days algorithm), with no formatter and no locale involved.
enum ISODate {
    /// Seconds from 1970-01-01 to 2001-01-01 (the reference date).
    private static let referenceOffset: Int64 = 978_307_200
    /// The first second of the year 1 and the last of the year 9999, since 1970.
    private static let earliest: Int64 = -62_135_596_800
    private static let latest: Int64 = 253_402_300_799
    private static let fractionDigitChoices = [3, 6, 9, 12, 15, 17, 20, 25, 30, 40]

    /// The text of a date stored as `seconds` since 2001-01-01, or nil when ISO 8601
    /// cannot hold it exactly (see the type's rules).
    static func string(seconds: Double) -> String? {
        // -0.0 seconds would read back as 0.0: written as the number, it keeps its sign.
        guard seconds.isFinite, !(seconds == 0 && seconds.sign == .minus) else { return nil }
        let whole = seconds.rounded(.down)
        // Exact for |seconds| >= 1 (Sterbenz); between -1 and 0 it may round, which the
        // round-trip check in `fractionDigits` catches.
        let fraction = seconds - whole
        guard let wholeSeconds = Int64(exactly: whole), abs(wholeSeconds) < 1 << 40 else { return nil }
        let unix = wholeSeconds + referenceOffset
        guard (earliest...latest).contains(unix), let digits = fractionDigits(fraction, whole: whole, seconds: seconds) else { return nil }
        let (days, secondOfDay) = floorDivision(unix, 86_400)
        let (year, month, day) = civil(days: days)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
            + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
            + "." + digits + "Z"
    }

    /// The seconds since 2001-01-01 of ISO 8601 text: `YYYY-MM-DDTHH:MM:SS`, an optional
    /// fraction of any length, then `Z` or `±HH:MM`; or a plain `YYYY-MM-DD` (midnight UTC).
    /// Nil for anything else, including impossible dates (`2023-02-30`).
    static func seconds(from text: String) -> Double? {
        let bytes = Array(text.utf8)
        var position = 0
        func number(_ length: Int) -> Int64? {
            guard bytes.count - position >= length else { return nil }
            var value: Int64 = 0
            for byte in bytes[position..<position + length] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            position += length
            return value
        }
        func expect(_ character: Character) -> Bool {
            guard position < bytes.count, let ascii = character.asciiValue, bytes[position] == ascii else { return false }
            position += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        var unix = days(year: year, month: month, day: day) * 86_400
        if position == bytes.count { return Double(unix - referenceOffset) }
        guard expect("T") || expect("t"),
              let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2),
              hour < 24, minute < 60, second < 60 else { return nil }
        unix += hour * 3600 + minute * 60 + second
        var fraction = 0.0
        if expect(".") {
            let start = position
            while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") { position += 1 }
            guard position > start, let value = Double("0." + String(decoding: bytes[start..<position], as: UTF8.self)) else { return nil }
            fraction = value
        }
        if expect("Z") || expect("z") {
            // UTC
        } else if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
            let sign: Int64 = bytes[position] == UInt8(ascii: "+") ? 1 : -1
            position += 1
            guard let hours = number(2), expect(":"), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            unix -= sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard position == bytes.count else { return nil }
        return Double(unix - referenceOffset) + fraction
    }

    /// The fewest fraction digits (at least 3) that `seconds(from:)` turns back into
    /// exactly `seconds` (as `whole` plus their value).
    private static func fractionDigits(_ fraction: Double, whole: Double, seconds: Double) -> String? {
        for count in fractionDigitChoices {
            let text = String(format: "%.\(count)f", fraction)
            // "%.3f" may round 0.9996 up to "1.000": not a fraction, try more digits.
            guard text.hasPrefix("0."), let value = Double(text), whole + value == seconds else { continue }
            var digits = text.dropFirst(2)
            while digits.count > 3, digits.last == "0" { digits = digits.dropLast() }
            return String(digits)
        }
        return nil
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = value / divisor - (value % divisor < 0 ? 1 : 0)
        return (quotient, value - quotient * divisor)
    }

    private static func isLeap(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date (eras of 400 years).
    private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDivision(shiftedYear, 400).quotient
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01.
    private static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = floorDivision(shifted, 146_097).quotient
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

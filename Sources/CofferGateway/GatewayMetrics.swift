import Synchronization

/// Counters the gateway exposes at `GET /metrics` in Prometheus' text format: requests by
/// route and status, refused tokens, rate-limited requests, calls the database refused or
/// could not take, and the waits held open.
final class GatewayMetrics: Sendable {
    private struct State {
        var requests: [String: Int] = [:]
        var seconds: [String: Double] = [:]
    }

    private let state = Mutex(State())

    /// Counts one request of `route` answered with `status` after `seconds`.
    func record(route: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests["\(route)|\(status)", default: 0] += 1
            state.seconds[route, default: 0] += seconds
        }
    }

    /// The text `GET /metrics` answers, with `waiting` open waits.
    func text(waiting: Int) -> String {
        let (requests, seconds) = state.withLock { ($0.requests, $0.seconds) }
        var lines = [
            "# HELP coffer_gateway_requests_total Requests by route and HTTP status.",
            "# TYPE coffer_gateway_requests_total counter",
        ]
        for key in requests.keys.sorted() {
            let parts = key.split(separator: "|", maxSplits: 1)
            lines.append("coffer_gateway_requests_total{route=\"\(parts[0])\",status=\"\(parts[1])\"} \(requests[key] ?? 0)")
        }
        lines += [
            "# HELP coffer_gateway_request_seconds_total Time spent answering, by route.",
            "# TYPE coffer_gateway_request_seconds_total counter",
        ]
        for route in seconds.keys.sorted() {
            lines.append("coffer_gateway_request_seconds_total{route=\"\(route)\"} \(seconds[route] ?? 0)")
        }
        lines += [
            "# HELP coffer_gateway_waiting Requests waiting for changes.",
            "# TYPE coffer_gateway_waiting gauge",
            "coffer_gateway_waiting \(waiting)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}

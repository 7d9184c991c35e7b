#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// A TCP proxy on loopback that the sync tests put between a replica and PostgreSQL to make
/// the network misbehave: each direction can be stalled (a partition: nothing is forwarded,
/// nothing is lost, as TCP would hold it), connections can be reset, and chunks delayed.
/// It counts the bytes forwarded each way.
///
/// Every connection is served by one thread that polls both sockets; the faults are read
/// before each forward, so a change takes effect within one poll interval (10 ms).
///
/// ```swift
/// let proxy = try FaultProxy(upstreamPort: cluster.port)
/// proxy.faults = .init(stallToServer: true)      // the replica's writes go nowhere
/// proxy.resetAll()                               // and every open connection breaks
/// proxy.faults = .init()                         // healed
/// proxy.stop()
/// ```
final class FaultProxy: Sendable {
    /// What the proxy does to the traffic now.
    struct Faults: Sendable, Equatable {
        /// Bytes from the client are not forwarded (held until the stall ends).
        var stallToServer = false
        /// Bytes from the server are not forwarded (held until the stall ends).
        var stallToClient = false
        /// Each forwarded chunk waits this long first.
        var delay: Duration = .zero
        /// New connections are refused: the proxy stops listening, so a connect fails with
        /// "connection refused", as it does when the server is down. (Accepting and then
        /// resetting would test something else: NIO may not report a reset that arrives
        /// before the first read, swift-nio issue 1756, and the connect would never end.)
        var refuseConnections = false
    }

    /// The loopback port clients connect to.
    let port: UInt16

    private struct State {
        var faults = Faults()
        var bytesToServer = 0
        var bytesToClient = 0
        var stopped = false
        /// Open connections: client socket, server socket.
        var connections: [Int32: Int32] = [:]
        var threads = 0
        /// The listening socket, or -1 while connections are refused.
        var listener: Int32 = -1
    }

    private let upstreamPort: UInt16
    private let state = Mutex(State())

    /// Starts a proxy on a free loopback port forwarding to `127.0.0.1:upstreamPort`.
    init(upstreamPort: UInt16) throws {
        self.upstreamPort = upstreamPort
        let socket = try Self.listen(port: 0)
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        port = UInt16(bigEndian: actual.sin_port)
        state.withLock {
            $0.listener = socket
            $0.threads += 1
        }
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// A socket listening on `127.0.0.1:port` (0: a free port).
    private static func listen(port: UInt16) throws -> Int32 {
        let socket = try makeSocket()
        var address = loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #if canImport(Glibc)
        let listening = bound == 0 && Glibc.listen(socket, 64) == 0
        #else
        let listening = bound == 0 && Darwin.listen(socket, 64) == 0
        #endif
        guard listening else {
            let code = errno
            close(socket)
            throw ProxyError.system("cannot listen on loopback port \(port)", code)
        }
        return socket
    }

    deinit { stop() }

    /// The faults in effect; set to change them (an empty `Faults()` heals everything).
    /// Refusing and accepting again take effect before the setter returns: the listening
    /// socket is closed, or opened again on the same port.
    var faults: Faults {
        get { state.withLock { $0.faults } }
        set {
            state.withLock { state in
                state.faults = newValue
                guard !state.stopped else { return }
                if newValue.refuseConnections, state.listener >= 0 {
                    // The accept thread may be polling this descriptor: shutting it down stops
                    // the listening at once; the number is reused only after the close, and
                    // the accept thread reads the current listener before each poll.
                    shutdown(state.listener, Int32(SHUT_RDWR))
                    close(state.listener)
                    state.listener = -1
                } else if !newValue.refuseConnections, state.listener < 0 {
                    // Bound again to the same port (SO_REUSEADDR); -1 if that fails, which the
                    // next connect reports as refused.
                    state.listener = (try? Self.listen(port: port)) ?? -1
                }
            }
        }
    }

    /// Bytes forwarded from clients to the server and back, since the proxy started.
    var bytesForwarded: (toServer: Int, toClient: Int) {
        state.withLock { ($0.bytesToServer, $0.bytesToClient) }
    }

    /// Breaks every open connection with a TCP reset, as a crashed middlebox would. The
    /// sockets are shut down here and closed by their connection's thread, which owns them
    /// (closing them here could hand their numbers to new sockets under a running poll).
    func resetAll() {
        let open = state.withLock { state in
            defer { state.connections.removeAll() }
            return state.connections
        }
        for (client, server) in open {
            for socket in [client, server] {
                var hard = linger(l_onoff: 1, l_linger: 0)
                setsockopt(socket, SOL_SOCKET, SO_LINGER, &hard, socklen_t(MemoryLayout<linger>.size))
                shutdown(socket, Int32(SHUT_RDWR))
            }
        }
    }

    /// Stops accepting, breaks every connection and waits (up to 5 s) for the proxy's threads
    /// to end. Safe to call more than once.
    func stop() {
        let (first, listener) = state.withLock { state in
            defer { state.stopped = true }
            return (!state.stopped, state.listener)
        }
        if first && listener >= 0 { shutdown(listener, Int32(SHUT_RDWR)) }
        resetAll()
        let deadline = ContinuousClock.now + .seconds(5)
        while state.withLock({ $0.threads }) > 0 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        if first && listener >= 0 {
            close(listener)
            state.withLock { $0.listener = -1 }
        }
    }

    // MARK: Serving

    private func acceptLoop() {
        defer { state.withLock { $0.threads -= 1 } }
        while true {
            let (listener, stopped) = state.withLock { ($0.listener, $0.stopped) }
            if stopped { return }
            guard listener >= 0 else {
                Thread.sleep(forTimeInterval: 0.005)  // refusing: nothing listens
                continue
            }
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 10) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            if state.withLock({ $0.stopped }) {
                Self.abort(client)
                continue
            }
            let server: Int32
            do {
                server = try Self.connectUpstream(port: upstreamPort)
            } catch {
                Self.abort(client)  // the upstream is down: the client sees a reset, as it would
                continue
            }
            state.withLock {
                $0.connections[client] = server
                $0.threads += 1
            }
            Thread.detachNewThread { [self] in serve(client: client, server: server) }
        }
    }

    /// Forwards both ways until either side closes or the connection is reset.
    private func serve(client: Int32, server: Int32) {
        defer {
            state.withLock { state in
                state.threads -= 1
                state.connections.removeValue(forKey: client)
            }
            close(client)
            close(server)
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let (faults, stopped, open) = state.withLock { ($0.faults, $0.stopped, $0.connections[client] != nil) }
            guard !stopped, open else { return }
            var watched = [
                pollfd(fd: client, events: faults.stallToServer ? 0 : Int16(POLLIN), revents: 0),
                pollfd(fd: server, events: faults.stallToClient ? 0 : Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&watched, 2, 10)
            guard ready > 0 else { continue }
            // Read again: a stall set while this thread polled holds from now on.
            let now = state.withLock { $0.faults }
            if now.stallToServer { watched[0].revents &= ~Int16(POLLIN) }
            if now.stallToClient { watched[1].revents &= ~Int16(POLLIN) }
            for (index, (from, to)) in [(client, server), (server, client)].enumerated() {
                let events = watched[index].revents
                if events & Int16(POLLERR | POLLNVAL) != 0 { return }
                if events & Int16(POLLHUP) != 0 && events & Int16(POLLIN) == 0 { return }
                guard events & Int16(POLLIN) != 0 else { continue }
                let count = read(from, buffer.baseAddress, buffer.count)
                guard count > 0 else { return }
                if now.delay > .zero { Thread.sleep(forTimeInterval: Self.seconds(now.delay)) }
                guard Self.writeAll(to, buffer, count: count) else { return }
                state.withLock {
                    if index == 0 { $0.bytesToServer += count } else { $0.bytesToClient += count }
                }
            }
        }
    }

    // MARK: Sockets

    enum ProxyError: Error, CustomStringConvertible {
        case system(String, Int32)
        var description: String {
            switch self {
            case let .system(what, code): return "\(what): \(String(cString: strerror(code)))"
            }
        }
    }

    private static func makeSocket() throws -> Int32 {
        #if canImport(Glibc)
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard socket >= 0 else { throw ProxyError.system("cannot create a socket", errno) }
        var on: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        return socket
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }

    private static func connectUpstream(port: UInt16) throws -> Int32 {
        let socket = try makeSocket()
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(socket)
            throw ProxyError.system("cannot connect to port \(port)", code)
        }
        return socket
    }

    /// Closes `socket` with a reset (linger 0) instead of an orderly FIN.
    private static func abort(_ socket: Int32) {
        var hard = linger(l_onoff: 1, l_linger: 0)
        setsockopt(socket, SOL_SOCKET, SO_LINGER, &hard, socklen_t(MemoryLayout<linger>.size))
        close(socket)
    }

    private static func writeAll(_ socket: Int32, _ buffer: UnsafeMutableRawBufferPointer, count: Int) -> Bool {
        guard let base = buffer.baseAddress else { return count == 0 }
        var sent = 0
        while sent < count {
            let written = send(socket, base + sent, count - sent, Int32(MSG_NOSIGNAL))
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            sent += written
        }
        return true
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

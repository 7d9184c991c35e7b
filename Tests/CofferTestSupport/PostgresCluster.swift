import Foundation
import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// The private PostgreSQL cluster the sync tests run against: one per test process, started
/// by the first test that asks for it, shared by every suite, stopped when the process exits.
///
/// The cluster lives in a fresh temporary directory owned by the `postgres` user (initdb
/// refuses root), listens on 127.0.0.1 only, on a free port, with durability switched off
/// (a test cluster is thrown away). It is stopped and its directory removed by an exit hook
/// and, should the process die without running it (a crash, kill -9), by a watcher process
/// that waits for the test process to end.
///
/// A test that stops the server (`pg_ctl stop -m immediate`) makes a private cluster of its
/// own, so that the suites sharing ``shared`` never see it go.
///
/// ```swift
/// let connection = try await PostgresCluster.shared.connect()
///
/// let tls = PostgresCluster(tls: (certificate: "/tmp/t/server.crt", key: "/tmp/t/server.key"))
/// let secured = try await tls.endpoint()  // TCP connections over TLS only
///
/// let cluster = PostgresCluster(synchronousCommit: true)
/// let endpoint = try await cluster.endpoint()
/// try await cluster.stopImmediately()   // a crash: no shutdown checkpoint
/// try await cluster.restart()           // same data directory, same port
/// try await cluster.destroy()
/// ```
package actor PostgresCluster {
    package static let shared = PostgresCluster()

    /// Whether a commit waits for its WAL to reach the kernel. The shared cluster does not
    /// (faster); a test that crashes the server needs it, or the server may lose commits it
    /// already reported (which a replica has acknowledged and will not send again).
    private let synchronousCommit: Bool
    /// The server's certificate and key (PEM files, copied into the cluster's directory)
    /// when it takes TCP connections over TLS only.
    private let tls: TLSFiles?
    private var running: Running?

    package typealias TLSFiles = (certificate: String, key: String)

    /// What a started cluster needs to be stopped and started again.
    private struct Running {
        let bin: String
        let directory: String
        let runAsPostgres: Bool
        let options: String
        let endpoint: Endpoint
        var data: String { directory + "/data" }
    }

    /// A cluster that starts on first use. `synchronousCommit` off is the shared cluster's.
    /// With `tls`, the server has `ssl=on` with that certificate, and its pg_hba.conf takes
    /// TCP connections over TLS only (`hostssl`); ``connect()`` is for clusters without it.
    package init(synchronousCommit: Bool = false, tls: TLSFiles? = nil) {
        self.synchronousCommit = synchronousCommit
        self.tls = tls
    }

    /// Where a started cluster listens.
    package struct Endpoint: Sendable {
        package let port: Int
        package let database: String
        package let user: String
    }

    private var started: Result<Endpoint, PostgresClusterError>?
    private var nextConnectionID = 0

    /// The running cluster, started on first use. A failure to start is remembered: every
    /// later caller fails with the same error instead of trying again.
    package func endpoint() throws -> Endpoint {
        if started == nil {
            do {
                let running = try Self.start(synchronousCommit: synchronousCommit, tls: tls)
                self.running = running
                started = .success(running.endpoint)
            } catch let error as PostgresClusterError {
                started = .failure(error)
            } catch {
                started = .failure(.startFailed("\(error)"))
            }
        }
        guard let started else { throw PostgresClusterError.startFailed("not started") }
        return try started.get()
    }

    /// A new connection to the test database, as the test role or as `user` (a role with
    /// LOGIN that a test created: the cluster trusts loopback logins). The caller closes it.
    package func connect(as user: String? = nil) async throws -> PostgresConnection {
        let endpoint = try endpoint()
        nextConnectionID += 1
        let configuration = PostgresConnection.Configuration(
            host: "127.0.0.1", port: endpoint.port, username: user ?? endpoint.user, password: nil,
            database: endpoint.database, tls: .disable
        )
        return try await PostgresConnection.connect(
            configuration: configuration, id: nextConnectionID, logger: Logger(label: "coffer.sync.tests")
        )
    }

    /// Stops the server as a crash would (`pg_ctl stop -m immediate`: no shutdown
    /// checkpoint, every connection cut); ``restart()`` starts it again, with recovery.
    package func stopImmediately() throws {
        guard let running else { throw PostgresClusterError.startFailed("not started") }
        try Self.run(running.bin + "/pg_ctl", ["stop", "-w", "-m", "immediate", "-D", running.data],
                     asPostgres: running.runAsPostgres)
    }

    /// Starts the stopped server again on the same data directory and port.
    package func restart() throws {
        guard let running else { throw PostgresClusterError.startFailed("not started") }
        try Self.run(running.bin + "/pg_ctl", ["start", "-w", "-t", "60", "-D", running.data, "-l",
                                               running.directory + "/server.log", "-o", running.options],
                     asPostgres: running.runAsPostgres)
    }

    /// Stops the server and removes its directory now (the exit hook and the watcher find
    /// nothing left to do). The cluster cannot be used afterwards.
    package func destroy() throws {
        guard let running else { return }
        self.running = nil
        started = .failure(.startFailed("destroyed"))
        try Cleanup.stop(directory: running.directory)
    }

    // MARK: Starting

    private static let database = "coffer_test"
    private static let role = "coffer_test"

    private static func start(synchronousCommit: Bool, tls: TLSFiles?) throws -> Running {
        let bin = try binaryDirectory()
        let runAsPostgres = geteuid() == 0
        let directory = try makeDirectory(ownedByPostgres: runAsPostgres)
        let data = directory + "/data"
        Cleanup.register(bin: bin, directory: directory, runAsPostgres: runAsPostgres)

        try run(bin + "/initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8",
                                  "--locale=C", "--no-sync"], asPostgres: runAsPostgres)
        if let tls { try requireTLS(tls, data: data, asPostgres: runAsPostgres) }
        var lastFailure = ""
        for _ in 0..<3 {
            let port = try freePort()
            // fsync stays off even with synchronous commits: a killed server loses nothing
            // the kernel has, and the tests never crash the machine.
            // The suites share the cluster and run at once: each replica holds a connection
            // and one that listens, each gateway a pool of four and its listener, which
            // together came within a few of 200 (SQLSTATE 53300 on a slow machine).
            let options = "-c listen_addresses=127.0.0.1 -p \(port) -c unix_socket_directories=\(directory)"
                + " -c fsync=off -c synchronous_commit=\(synchronousCommit ? "on" : "off") -c full_page_writes=off"
                + " -c max_connections=500 -c idle_in_transaction_session_timeout=60000"
                + (tls == nil ? "" : " -c ssl=on")
            do {
                try run(bin + "/pg_ctl", ["start", "-w", "-t", "60", "-D", data, "-l", directory + "/server.log",
                                          "-o", options], asPostgres: runAsPostgres)
            } catch {
                lastFailure = "\(error)\n" + ((try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? "")
                continue
            }
            Cleanup.started(directory: directory)
            let psql = ["-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-q"]
            // CREATEROLE: row-level security tests create the roles they push as.
            try run(bin + "/psql", psql + ["-c", "CREATE ROLE \(role) LOGIN CREATEROLE"], asPostgres: runAsPostgres)
            try run(bin + "/psql", psql + ["-c", "CREATE DATABASE \(database) OWNER \(role)"], asPostgres: runAsPostgres)
            return Running(bin: bin, directory: directory, runAsPostgres: runAsPostgres, options: options,
                           endpoint: Endpoint(port: port, database: database, user: role))
        }
        throw PostgresClusterError.startFailed(lastFailure)
    }

    /// Puts the certificate and key in the data directory (where `ssl=on` looks for
    /// server.crt and server.key; the key readable by the server's user only), and lets TCP
    /// clients in over TLS only.
    private static func requireTLS(_ tls: TLSFiles, data: String, asPostgres: Bool) throws {
        for (source, name) in [(tls.certificate, "server.crt"), (tls.key, "server.key")] {
            try run("/bin/cp", [source, data + "/" + name], asPostgres: false)
            if asPostgres { try run("/bin/chown", ["postgres:", data + "/" + name], asPostgres: false) }
            try run("/bin/chmod", ["600", data + "/" + name], asPostgres: false)
        }
        let rules = "local all all trust\nhostssl all all 127.0.0.1/32 trust\n"
        try rules.write(toFile: data + "/pg_hba.conf", atomically: false, encoding: .utf8)
    }

    /// The directory holding initdb and pg_ctl: `pg_config --bindir`, then the newest
    /// /usr/lib/postgresql/*/bin, then PATH.
    private static func binaryDirectory() throws -> String {
        var candidates: [String] = []
        if let bindir = try? capture("/usr/bin/env", ["pg_config", "--bindir"]) {
            candidates.append(bindir.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            candidates.append("/usr/lib/postgresql/\(version)/bin")
        }
        for entry in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            candidates.append(String(entry))
        }
        let tools = ["initdb", "pg_ctl", "psql"]
        for directory in candidates
        where tools.allSatisfy({ FileManager.default.isExecutableFile(atPath: directory + "/" + $0) }) {
            return directory
        }
        throw PostgresClusterError.binariesMissing(searched: candidates)
    }

    private static func makeDirectory(ownedByPostgres: Bool) throws -> String {
        var template = Array("/tmp/coffer-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw PostgresClusterError.startFailed("cannot create a temporary directory: errno \(errno)")
        }
        let directory = String(cString: made)
        if ownedByPostgres {
            try run("/bin/chown", ["postgres:", directory], asPostgres: false)
        }
        return directory
    }

    /// A loopback port nobody listens on now (the kernel's choice for port 0).
    package static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PostgresClusterError.startFailed("socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else { throw PostgresClusterError.startFailed("bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: Processes

    /// Runs a tool to its end; throws with its output when it fails.
    static func run(_ tool: String, _ arguments: [String], asPostgres: Bool) throws {
        let (executable, fullArguments) = asPostgres
            ? ("/usr/sbin/runuser", ["-u", "postgres", "--", tool] + arguments)
            : (tool, arguments)
        try capture(executable, fullArguments, failing: true)
    }

    /// Runs a tool and returns what it printed (through a file).
    ///
    /// Spawned directly rather than with Foundation's `Process`, which learns that a child
    /// ended when a socket it shares with the child closes: `pg_ctl start` leaves the server
    /// running with that socket inherited, and the wait would never end. Here the child gets
    /// only stdin, stdout and stderr, and is waited for by its pid.
    @discardableResult
    static func capture(_ executable: String, _ arguments: [String], failing: Bool = true) throws -> String {
        let outputPath = NSTemporaryDirectory() + "coffer-pg-output-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let pid = try spawn([executable] + arguments, output: outputPath)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exitedCleanly = (status & 0x7f) == 0 && ((status >> 8) & 0xff) == 0
        if failing && !exitedCleanly {
            throw PostgresClusterError.commandFailed(
                ([executable] + arguments).joined(separator: " "), status: status, output: text
            )
        }
        return text
    }

    /// Starts `argv` with stdin from /dev/null, stdout and stderr to `output` (or /dev/null),
    /// and no other descriptor of this process (bash closes them before the exec).
    static func spawn(_ argv: [String], output: String?) throws -> pid_t {
        let closeOthers = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done; exec "$@""#
        let full: [String] = ["/bin/bash", "-c", closeOthers, "bash"] + argv
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let pointers = full.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, pointers, environ)
        guard spawned == 0 else {
            throw PostgresClusterError.commandFailed(argv.joined(separator: " "), status: spawned, output: "posix_spawn failed")
        }
        return pid
    }
}

/// Why the test cluster is not there. Every message names the package to install.
package enum PostgresClusterError: Error, CustomStringConvertible {
    case binariesMissing(searched: [String])
    case startFailed(String)
    case commandFailed(String, status: Int32, output: String)

    package var description: String {
        let hint = "The sync tests start a private PostgreSQL cluster: install the Debian package postgresql-15 (apt-get install postgresql-15)."
        switch self {
        case .binariesMissing(let searched):
            return "PostgreSQL server binaries (initdb, pg_ctl, psql) not found in \(searched). \(hint)"
        case .startFailed(let detail):
            return "The PostgreSQL test cluster did not start: \(detail)\n\(hint)"
        case .commandFailed(let command, let status, let output):
            return "`\(command)` exited with \(status): \(output)\n\(hint)"
        }
    }
}

/// Stops every cluster and removes its directory when the test process ends.
///
/// Two paths, so that a cluster never outlives its tests: an `atexit` hook for a normal exit
/// (Swift Testing's runner returns from main with the process's status), and a watcher
/// process per cluster, started with it, that polls for the test process and does the same
/// cleanup once it is gone (a crash or kill -9 skips atexit). Whichever comes first wins; the
/// second finds nothing to do.
enum Cleanup {
    private struct Cluster {
        var bin: String
        var runAsPostgres: Bool
    }

    private final class Box: @unchecked Sendable {
        let lock = NSLock()
        var clusters: [String: Cluster] = [:]   // by directory
        var hooked = false
    }

    private static let box = Box()

    private static func withState<T>(_ body: (Box) -> T) -> T {
        box.lock.lock()
        defer { box.lock.unlock() }
        return body(box)
    }

    static func register(bin: String, directory: String, runAsPostgres: Bool) {
        let first = withState { box -> Bool in
            box.clusters[directory] = Cluster(bin: bin, runAsPostgres: runAsPostgres)
            defer { box.hooked = true }
            return !box.hooked
        }
        if first { atexit { Cleanup.stopAll() } }
    }

    /// Starts the watcher of the cluster in `directory` once its server runs.
    static func started(directory: String) {
        guard let cluster = withState({ $0.clusters[directory] }) else { return }
        let stop = stopCommand(bin: cluster.bin, directory: directory, runAsPostgres: cluster.runAsPostgres)
        let script = "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; \(stop)"
        // Not waited for: it outlives the test process by design (setsid keeps it out of
        // the test's process group).
        if (try? PostgresCluster.spawn(["/usr/bin/setsid", "/bin/sh", "-c", script], output: nil)) == nil {
            FileHandle.standardError.write(Data("could not start the PostgreSQL test cluster's watcher\n".utf8))
        }
    }

    /// Stops the cluster in `directory` and removes the directory now.
    static func stop(directory: String) throws {
        guard let cluster = withState({ $0.clusters.removeValue(forKey: directory) }) else { return }
        try PostgresCluster.capture("/bin/sh", ["-c", stopCommand(bin: cluster.bin, directory: directory, runAsPostgres: cluster.runAsPostgres)])
    }

    private static func stopCommand(bin: String, directory: String, runAsPostgres: Bool) -> String {
        let prefix = runAsPostgres ? "/usr/sbin/runuser -u postgres -- " : ""
        return "if [ -d '\(directory)/data' ]; then \(prefix)'\(bin)/pg_ctl' stop -m fast -w -D '\(directory)/data' >/dev/null 2>&1; fi;"
            + " rm -rf '\(directory)'"
    }

    private static func stopAll() {
        let directories = withState { Array($0.clusters.keys) }
        for directory in directories {
            do {
                try stop(directory: directory)
            } catch {
                FileHandle.standardError.write(Data("could not stop the PostgreSQL test cluster in \(directory): \(error)\n".utf8))
            }
        }
    }
}

/// Runs `body` with a new connection to the test database (as the test role, or as `user`)
/// and closes it afterwards, also when `body` throws.
///
/// ```swift
/// let count = try await withConnection { try await $0.query("SELECT 1", logger: $0.logger).collect().count }
/// ```
package func withConnection<T>(as user: String? = nil, _ body: (PostgresConnection) async throws -> T) async throws -> T {
    let connection = try await PostgresCluster.shared.connect(as: user)
    do {
        let result = try await body(connection)
        try await connection.close()
        return result
    } catch {
        try? await connection.close()
        throw error
    }
}

import Coffer
import CofferSync
import Foundation
import Testing

/// The tool's `sslmode` and `sslrootcert` against a cluster of its own (started and removed
/// here) that has `ssl=on` with a certificate made by a test root, and takes TCP connections
/// over TLS only; and the modes that fail before or without such a server.
@Suite struct SyncToolTLSTests {
    /// A test root, a server certificate it signed (for localhost and 127.0.0.1), and a second
    /// root that signed nothing the server has: PEM files in `directory`.
    struct Certificates {
        let directory: String
        var root: String { directory + "/root.crt" }
        var otherRoot: String { directory + "/other-root.crt" }
        var server: PostgresCluster.TLSFiles { (certificate: directory + "/server.crt", key: directory + "/server.key") }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-tls-" + UUID().uuidString).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            try Self.openssl(["req", "-x509"] + key + ["-keyout", directory + "/root.key", "-out", root,
                                                      "-days", "2", "-subj", "/CN=coffer test root"])
            try Self.openssl(["req", "-x509"] + key + ["-keyout", directory + "/other-root.key", "-out", otherRoot,
                                                      "-days", "2", "-subj", "/CN=coffer other root"])
            try Self.openssl(["req"] + key + ["-keyout", directory + "/server.key", "-out", directory + "/server.csr",
                                              "-subj", "/CN=localhost"])
            try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: directory + "/server.ext", atomically: false, encoding: .utf8)
            try Self.openssl(["x509", "-req", "-in", directory + "/server.csr", "-CA", root, "-CAkey", directory + "/root.key",
                              "-CAcreateserial", "-days", "2", "-extfile", directory + "/server.ext", "-out", directory + "/server.crt"])
        }

        /// Runs openssl with `arguments`; throws when it fails.
        static func openssl(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["openssl"] + arguments
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw OpenSSLFailed(arguments: arguments, status: process.terminationStatus) }
        }

        func remove() {
            do { try FileManager.default.removeItem(atPath: directory) } catch { Issue.record("removing \(directory): \(error)") }
        }
    }

    struct OpenSSLFailed: Error, CustomStringConvertible {
        let arguments: [String]
        let status: Int32
        var description: String { "openssl \(arguments.joined(separator: " ")) exited with \(status) (the TLS tests need openssl)" }
    }

    /// A store with one synced entity, for `coffer sync install`.
    static func syncedStore() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sync-tool-" + UUID().uuidString).path
        let store = try Store(directory: directory)
        try store.box(for: Chore.self).put(Chore(title: "sweep", code: "c1"))
        try store.close()
        return directory
    }

    @Test func sslModesAgainstAServerThatTakesTLSOnly() async throws {
        let certificates = try Certificates()
        defer { certificates.remove() }
        let store = try Self.syncedStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let cluster = PostgresCluster(tls: certificates.server)
        do {
            let endpoint = try await cluster.endpoint()
            try Self.checkModes(against: endpoint, store: store, certificates: certificates)
        } catch {
            try await cluster.destroy()
            throw error
        }
        try await cluster.destroy()
    }

    static func checkModes(against endpoint: PostgresCluster.Endpoint, store: String, certificates: Certificates) throws {
        func install(host: String = "127.0.0.1", _ query: String) throws -> SyncToolTests.Run {
            let url = "postgres://\(endpoint.user)@\(host):\(endpoint.port)/\(endpoint.database)?\(query)"
            return try SyncToolTests.coffer(["sync", "install", store, "--url", url, "--schema", uniqueSchemaName("tls")])
        }

        for works in ["sslmode=require", "sslmode=prefer", "sslmode=verify-ca&sslrootcert=\(certificates.root)",
                      "sslmode=verify-full&sslrootcert=\(certificates.root)", "sslmode=require&sslrootcert=\(certificates.root)"] {
            let run = try install(works)
            #expect(run.status == 0 && run.output.contains("Installed schema"), "\(works): \(run.errors)")
        }
        let named = try install(host: "localhost", "sslmode=verify-full&sslrootcert=\(certificates.root)")
        #expect(named.status == 0, "verify-full by host name: \(named.errors)")

        // A certificate another root signed: refused, and the message says why.
        for mode in ["verify-full", "verify-ca", "require"] {
            let run = try install("sslmode=\(mode)&sslrootcert=\(certificates.otherRoot)")
            #expect(run.status == 1, "\(mode) with the wrong root connected")
            #expect(run.errors.contains("TLS failed (sslmode=\(mode), sslrootcert=\(certificates.otherRoot))"), "\(run.errors)")
            #expect(run.errors.lowercased().contains("certificate"), "\(run.errors)")
        }
        // No TLS where the server demands it: the server's refusal, and what to use instead.
        let plain = try install("sslmode=disable")
        #expect(plain.status == 1, "a plain connection got in")
        #expect(plain.errors.contains("no encryption") && plain.errors.contains("only over TLS: use sslmode=require or verify-full"),
                "\(plain.errors)")
    }

    @Test func sslModesThatCannotBeHonouredFailClearly() async throws {
        let store = try Self.syncedStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let endpoint = try await PostgresCluster.shared.endpoint()   // no TLS
        let base = "postgres://\(endpoint.user)@127.0.0.1:\(endpoint.port)/\(endpoint.database)"
        let notPEM = store + ".txt"
        try "not a certificate\n".write(toFile: notPEM, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: notPEM) }
        let expectations: [(query: String, message: String)] = [
            ("sslmode=require", "the server does not offer TLS (sslmode=require)"),
            ("sslmode=allow", "sslmode=allow is not supported"),
            ("sslmode=verify", "sslmode=verify is not one of disable, prefer, require, verify-ca, verify-full"),
            ("sslmode=verify-full&sslrootcert=/nonexistent/root.crt", "sslrootcert=/nonexistent/root.crt cannot be read"),
            ("sslmode=verify-full&sslrootcert=\(notPEM)", "holds no PEM certificate"),
            ("sslcert=/tmp/client.crt", "sslcert is not supported"),
        ]
        for (query, message) in expectations {
            let run = try SyncToolTests.coffer(["sync", "status", store, "--url", base + "?" + query])
            #expect(run.status == 1 && run.errors.contains(message), "\(query): \(run.errors)")
        }
        // Without TLS on the server, prefer (the default) and disable connect in plain.
        for query in ["", "?sslmode=prefer", "?sslmode=disable"] {
            let schema = uniqueSchemaName("plain")
            let run = try SyncToolTests.coffer(["sync", "install", store, "--url", base + query, "--schema", schema])
            #expect(run.status == 0, "\(query): \(run.errors)")
            try await withConnection { try await $0.run("DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE") }
        }
    }
}

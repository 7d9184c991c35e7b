import ArgumentParser
import Foundation
import PostgresNIO

/// A `postgres://user:password@host:port/database?sslmode=...&sslrootcert=...` URL, parsed for
/// postgres-nio (TLS: see ``PostgresTLS``).
struct PostgresURL {
    let host: String
    let port: Int
    let user: String
    let password: String?
    let database: String?
    let tls: PostgresTLS

    /// host:port/database, without the password, for messages.
    var display: String { "\(host):\(port)/\(database ?? user)" }

    init(_ text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
              ["postgres", "postgresql"].contains(scheme.lowercased()) else {
            throw ToolError("not a postgres:// URL: \(text)")
        }
        tls = try PostgresTLS(query: components.queryItems ?? [])
        host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
        port = components.port ?? 5432
        user = components.user ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
        password = components.password
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? nil : path
    }
}

/// A message for standard error (the tool exits with status 1).
struct ToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Writes `message` to standard error; the error to throw so that the tool exits with 1.
func toolFailure(_ message: String) -> ExitCode {
    FileHandle.standardError.write(Data("coffer: \(message)\n".utf8))
    return ExitCode.failure
}

/// Connects to `target`, runs `body`, closes the connection. A server error becomes its
/// message (SQLSTATE, message, detail) on standard error and exit status 1.
func withServer<T>(_ target: PostgresURL, _ body: (PostgresConnection) async throws -> T) async throws -> T {
    let tls: PostgresConnection.Configuration.TLS
    do {
        tls = try target.tls.configuration()
    } catch {
        throw toolFailure("\(error)")
    }
    let configuration = PostgresConnection.Configuration(
        host: target.host, port: target.port, username: target.user, password: target.password,
        database: target.database, tls: tls)
    let connection: PostgresConnection
    do {
        connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Logger(label: "coffer.sync"))
    } catch {
        throw toolFailure("cannot connect to \(target.display): \(describeConnectFailure(error, tls: target.tls))")
    }
    do {
        let result = try await body(connection)
        try? await connection.close()
        return result
    } catch let exit as ExitCode {
        try? await connection.close()
        throw exit
    } catch {
        try? await connection.close()
        throw toolFailure(describe(error))
    }
}

/// Why a connection failed, in words that point at the TLS setting when it is the cause: a
/// server without TLS under `require` or stricter, a certificate that does not verify, or a
/// server that takes this connection only over TLS under `disable`.
func describeConnectFailure(_ error: any Error, tls: PostgresTLS) -> String {
    guard let error = error as? PSQLError else { return describe(error) }
    if error.code == .sslUnsupported {
        return "the server does not offer TLS (\(tls.display)); sslmode=prefer or disable connects without it"
    }
    if let underlying = error.underlying, underlying is NIOSSLError || underlying is NIOSSLExtraError || underlying is BoringSSLError {
        let hint = switch tls.mode {
        case .verifyFull: "the server's certificate must chain to sslrootcert and name the host"
        case .verifyCA: "the server's certificate must chain to sslrootcert"
        default: "the TLS handshake with the server failed"
        }
        return "TLS failed (\(tls.display)): \(hint): \(underlying)"
    }
    let text = describe(error)
    if tls.mode == .disable, error.serverInfo?[.sqlState] == "28000", text.contains("no encryption") {
        return text + "; the server takes this connection only over TLS: use sslmode=require or verify-full"
    }
    return text
}

/// What went wrong, with the server's own words (PSQLError's description hides them).
func describe(_ error: any Error) -> String {
    guard let error = error as? PSQLError else { return "\(error)" }
    if let info = error.serverInfo {
        var text = info[.message] ?? "server error"
        if let code = info[.sqlState] { text = "\(code): " + text }
        if let detail = info[.detail] { text += " (\(detail))" }
        return text
    }
    if let underlying = error.underlying { return "\(error.code): \(underlying)" }
    return "\(error.code)"
}

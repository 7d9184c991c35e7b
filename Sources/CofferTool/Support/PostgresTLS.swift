import Foundation
import PostgresNIO

/// TLS for the tool's connection, from a postgres:// URL's `sslmode` and `sslrootcert`, with
/// libpq's meanings:
/// - `disable`: no TLS.
/// - `prefer` (the default, as in libpq): TLS when the server offers it, plain otherwise. The
///   certificate is not checked, unless `sslrootcert` is given (then its chain is).
/// - `require`: TLS or no connection. The certificate is not checked, unless `sslrootcert`
///   is given (then as `verify-ca`).
/// - `verify-ca`: TLS, and the server's certificate must chain to `sslrootcert`.
/// - `verify-full`: as `verify-ca`, and the certificate must name the host of the URL.
///
/// `sslrootcert` is a PEM file of the trusted root certificates, or `system` for the system's
/// roots; without it, `verify-ca` and `verify-full` use `~/.postgresql/root.crt` as libpq
/// does. `allow` (plain first, TLS only if the server then refuses) is refused: postgres-nio
/// cannot retry a refused plain connection with TLS. Client certificates (`sslcert`,
/// `sslkey`) are not supported.
struct PostgresTLS {
    enum Mode: String, CaseIterable {
        case disable, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    let mode: Mode
    /// The file of trusted roots (nil: none given; "system": the system's roots).
    let rootCertificate: String?

    /// The mode and root file of a URL's query, refusing what the tool cannot honour.
    init(query: [URLQueryItem]) throws {
        var mode = Mode.prefer
        var rootCertificate: String?
        for item in query where item.name.hasPrefix("ssl") {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                if value == "allow" {
                    throw ToolError("sslmode=allow is not supported (a refused plain connection is not retried with TLS): use prefer or require")
                }
                guard let known = Mode(rawValue: value) else {
                    throw ToolError("sslmode=\(value) is not one of \(Mode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                mode = known
            case "sslrootcert":
                guard !value.isEmpty else { throw ToolError("sslrootcert is empty: give a PEM file of root certificates, or system") }
                rootCertificate = value
            default:
                throw ToolError("\(item.name) is not supported: the tool takes sslmode and sslrootcert")
            }
        }
        self.mode = mode
        self.rootCertificate = rootCertificate
    }

    /// What the message of a failed connection names: the mode, and the root file if any.
    var display: String {
        "sslmode=\(mode.rawValue)" + (rootCertificate.map { ", sslrootcert=\($0)" } ?? "")
    }

    /// The TLS setting for postgres-nio.
    func configuration() throws -> PostgresConnection.Configuration.TLS {
        guard mode != .disable else { return .disable }
        var tls = TLSConfiguration.makeClientConfiguration()
        let roots = try trustRoots()
        if let roots { tls.trustRoots = roots }
        switch mode {
        case .disable: return .disable
        case .prefer, .require: tls.certificateVerification = roots == nil ? .none : .noHostnameVerification
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw ToolError("the TLS set-up failed (\(display)): \(error)")
        }
        return mode == .prefer ? .prefer(context) : .require(context)
    }

    /// The roots to check the server's certificate against; nil when it is not checked.
    private func trustRoots() throws -> NIOSSLTrustRoots? {
        let verifying = mode == .verifyCA || mode == .verifyFull
        guard let rootCertificate else {
            guard verifying else { return nil }
            let home = FileManager.default.homeDirectoryForCurrentUser.path + "/.postgresql/root.crt"
            guard FileManager.default.isReadableFile(atPath: home) else {
                throw ToolError("sslmode=\(mode.rawValue) checks the server's certificate: give its root with sslrootcert=/path/to/root.crt (or sslrootcert=system), or put it in \(home)")
            }
            return try Self.roots(in: home)
        }
        return rootCertificate == "system" ? .default : try Self.roots(in: rootCertificate)
    }

    /// The certificates of the PEM file at `path`, read now so that a wrong file is named as such.
    private static func roots(in path: String) throws -> NIOSSLTrustRoots {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ToolError("sslrootcert=\(path) cannot be read")
        }
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw ToolError("sslrootcert=\(path) holds no PEM certificate: \(error)")
        }
        guard !certificates.isEmpty else { throw ToolError("sslrootcert=\(path) holds no PEM certificate") }
        return .certificates(certificates)
    }
}

import Foundation
import JWTKit

/// The claims a gateway reads from a token: the user (`sub`, or another claim holding a
/// string), when it expires, and who issued it for whom.
struct GatewayClaims: JWTPayload {
    var sub: SubjectClaim?
    var exp: ExpirationClaim
    var iss: IssuerClaim?
    var aud: AudienceClaim?

    func verify(using algorithm: some JWTAlgorithm) async throws {
        // Checked by the authenticator, which knows the leeway, issuer and audience.
    }
}

/// Checks a request's bearer token and says which user it names. A token that is missing,
/// malformed, signed with another key or algorithm, expired, or for another issuer or
/// audience is refused with the reason, which the gateway logs but does not send.
struct GatewayAuthenticator: Sendable {
    let keys: JWTKeyCollection
    let token: GatewayConfiguration.Token

    /// Why a token was refused.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    static func make(_ token: GatewayConfiguration.Token) async throws -> GatewayAuthenticator {
        let keys = JWTKeyCollection()
        if let secret = token.hmacSecret {
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        }
        if let file = token.publicKeyFile {
            let pem: String
            do {
                pem = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw GatewayConfigurationError(member: "token.publicKeyFile", reason: "cannot be read: \(error.localizedDescription)")
            }
            if let key = try? ES256PublicKey(pem: pem) {
                await keys.add(ecdsa: key)
            } else if let key = try? Insecure.RSA.PublicKey(pem: pem) {
                await keys.add(rsa: key, digestAlgorithm: .sha256)
            } else {
                throw GatewayConfigurationError(member: "token.publicKeyFile", reason: "holds neither an ECDSA P-256 nor an RSA public key in PEM")
            }
        }
        return GatewayAuthenticator(keys: keys, token: token)
    }

    /// The user the `Authorization` header's bearer token names.
    func user(authorization: String?, now: Date = Date()) async throws -> String {
        guard let authorization, authorization.count > 7,
              authorization.prefix(7).lowercased() == "bearer " else {
            throw Refusal(description: "no bearer token")
        }
        let jwt = String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        guard jwt.utf8.count <= 16_384 else { throw Refusal(description: "token longer than 16 KiB") }
        let claims: GatewayClaims
        do {
            claims = try await keys.verify(jwt, as: GatewayClaims.self)
        } catch {
            throw Refusal(description: "token not verified: \(error)")
        }
        let leeway = TimeInterval(token.leewaySeconds)
        guard claims.exp.value.addingTimeInterval(leeway) > now else {
            throw Refusal(description: "token expired at \(claims.exp.value)")
        }
        if let issuer = token.issuer, claims.iss?.value != issuer {
            throw Refusal(description: "token issued by \(claims.iss?.value ?? "nobody"), not \(issuer)")
        }
        if let audience = token.audience, !(claims.aud?.value.contains(audience) ?? false) {
            throw Refusal(description: "token not for audience \(audience)")
        }
        guard let user = claims.sub?.value, !user.isEmpty, user.utf8.count <= 256,
              !user.unicodeScalars.contains(where: { $0.value == 0 }) else {
            throw Refusal(description: "token names no user (sub)")
        }
        return user
    }
}

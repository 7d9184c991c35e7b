import CofferGateway
import Foundation
import Logging

// coffer-gateway [CONFIG.json]: reads the configuration (the file, then COFFER_GATEWAY_*
// variables), serves until SIGINT or SIGTERM. See the README's "Gateway for public apps".
let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--help") || arguments.contains("-h") || arguments.count > 1 {
    print("usage: coffer-gateway [CONFIG.json]   (settings: the README's \"Gateway for public apps\")")
    exit(arguments.count > 1 ? 64 : 0)
}
do {
    let configuration = try GatewayConfiguration(file: arguments.first, environment: ProcessInfo.processInfo.environment)
    var logger = Logger(label: "coffer.gateway")
    logger.logLevel = .info
    let gateway = try await Gateway(configuration: configuration, logger: logger)
    let server = Task {
        try await gateway.run { port in
            print("coffer-gateway listening on \(configuration.host):\(port)")
        }
    }
    // SIGINT or SIGTERM cancels the task, which shuts the gateway down gracefully.
    let sources = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number)
        source.setEventHandler { server.cancel() }
        source.resume()
        return source
    }
    defer { withExtendedLifetime(sources) {} }
    do {
        try await server.value
    } catch is CancellationError {
    }
} catch {
    FileHandle.standardError.write(Data("coffer-gateway: \(error)\n".utf8))
    exit(1)
}

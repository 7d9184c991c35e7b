import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

/// The expansion behind every Coffer annotation (`@Index`, `@Unique`, `@Transient`, ...).
///
/// The annotations only mark properties: the build-tool plugin's generator reads them from
/// the source text. Declaring them as macros makes the compiler check their spelling and
/// arguments, so a typo such as `@Indx` is a build error instead of a silently ignored comment.
public struct MarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}

@main
struct CofferMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [MarkerMacro.self]
}

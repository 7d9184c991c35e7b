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

/// The expansion behind `@StoredAs` and `@Sync` on an entity type: an extension macro that adds nothing
/// (an extension role, unlike a peer role, is not expanded during top-level name lookup, so
/// the generated statics do not become circular references).
public struct EntityMarkerMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        []
    }
}

@main
struct CofferMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [MarkerMacro.self, EntityMarkerMacro.self]
}

import SwiftParser
import SwiftSyntax

/// Reads entity declarations out of a target's sources and checks them, collecting a
/// diagnostic (with file and line) for everything the generated code could not support.
struct SourceAnalyzer {
    private(set) var entities: [EntityModel] = []
    private(set) var diagnostics: [Diagnostic] = []
    private(set) var imports: [String] = []

    /// Raw-value enums by qualified and by simple name -> the raw type.
    private(set) var enumRawTypes: [String: String] = [:]

    /// A struct marked `Embedded`, where it is declared.
    struct EmbeddedDeclaration {
        let qualifiedName: String
        let decl: StructDeclSyntax
        let file: SourceFile
        let converter: SourceLocationConverter
    }
    /// `Embedded` structs by qualified name.
    private var embeddedDeclarations: [String: EmbeddedDeclaration] = [:]
    /// The analysed leaves of each embedded type used so far (nil: it has errors).
    private var embeddedLeaves: [String: [PropertyModel]?] = [:]
    /// The embedded types being analysed, outermost first (to find a type containing itself).
    private var embeddingStack: [String] = []
    /// Embedded types stored as array elements, in the order first needed: their element
    /// codecs are generated.
    private(set) var documentCodecs: [DocumentCodecModel] = []
    /// Files declaring embedded types that entities use: their imports go into the generated file.
    private var embeddedFiles: Set<String> = []
    /// `PropertyConvertible` types by qualified name -> the `StoredValue` type written in
    /// their declarations (nil: none written). `URL` and `Decimal` come built in.
    private var convertibleTypes: [String: String?] = ["URL": "String", "Foundation.URL": "String",
                                                      "Decimal": "String", "Foundation.Decimal": "String"]
    /// Where each source type conforms to `PropertyConvertible`, for the missing-typealias error.
    private var conformances: [String: (node: Syntax, file: SourceFile, converter: SourceLocationConverter)] = [:]
    /// `typealias StoredValue = X` found in any declaration or extension of a type.
    private var storedValueAliases: [String: String] = [:]

    static let scalarTypes: [String: String] = [
        "Bool": "bool", "Int": "int", "Int8": "int8", "Int16": "int16", "Int32": "int32", "Int64": "int64",
        "UInt": "uint", "UInt8": "uint8", "UInt16": "uint16", "UInt32": "uint32", "UInt64": "uint64",
        "Id": "uint64", "Float": "float", "Double": "double", "String": "string", "Date": "date",
        "Data": "data", "UUID": "uuid", "JSONValue": "json",
    ]
    static let dictionaryTypes: [String: String] = [
        "String": "stringDictionary", "Int": "intDictionary", "Double": "doubleDictionary", "Bool": "boolDictionary",
    ]
    static let arrayTypes: [String: String] = [
        "String": "stringArray", "Int": "intArray", "Double": "doubleArray", "Bool": "boolArray",
        "Int8": "int8Array", "Int16": "int16Array", "Int32": "int32Array", "Int64": "int64Array",
        "UInt": "uintArray", "UInt8": "uint8Array", "UInt16": "uint16Array", "UInt32": "uint32Array", "UInt64": "uint64Array",
        "Id": "uint64Array", "Float": "floatArray", "Date": "dateArray", "UUID": "uuidArray",
    ]
    static let supportedList =
        "Bool, Int, Int8-Int64, UInt, UInt8-UInt64, Float, Double, String, Date, Data, UUID, arrays of those but Data, enums with a raw type of those and arrays of them, JSONValue, [String: String/Int/Double/Bool], structs marked Embedded, PropertyConvertible types, and optionals of them"
    static let markers: Set<String> = ["Index", "Unique", "Transient", "Name", "Renamed", "CreatedAt", "UpdatedAt", "Backlink", "FullText"]

    init(files: [SourceFile]) {
        let parsed = files.map { file in (file, Parser.parse(source: file.text)) }
        for (file, tree) in parsed {
            let declarations = tree.statements.compactMap { $0.item.as(DeclSyntax.self) }
            collectEnums(declarations, parents: [])
            let converter = SourceLocationConverter(fileName: file.path, tree: tree)
            collectEmbedded(declarations, parents: [], file: file, converter: converter)
        }
        for (name, conformance) in conformances {
            convertibleTypes[name] = .some(storedValueAliases[name])
            if storedValueAliases[name] == nil {
                var context = FileContext(file: conformance.file, converter: conformance.converter)
                report(conformance.node, "'\(name)' conforms to PropertyConvertible but declares no 'typealias StoredValue = ...': the generator needs it (in the type or an extension in this target) to know how the value is stored", &context)
            }
        }
        for (file, tree) in parsed {
            let converter = SourceLocationConverter(fileName: file.path, tree: tree)
            var context = FileContext(file: file, converter: converter)
            let declarations = tree.statements.compactMap { $0.item.as(DeclSyntax.self) }
            let before = entities.count
            walk(declarations, parents: [], context: &context)
            if entities.count > before || context.hadEntityError {
                for declaration in declarations {
                    guard let importDecl = declaration.as(ImportDeclSyntax.self) else { continue }
                    let text = importDecl.trimmedDescription
                    if !imports.contains(text) { imports.append(text) }
                }
            }
        }
        for (file, tree) in parsed where embeddedFiles.contains(file.path) {
            for item in tree.statements {
                guard let importDecl = item.item.as(ImportDeclSyntax.self) else { continue }
                let text = importDecl.trimmedDescription
                if !imports.contains(text) { imports.append(text) }
            }
        }
        resolveRelationTargets()
    }

    // MARK: Embedded types

    private mutating func collectEmbedded(_ declarations: [DeclSyntax], parents: [String], file: SourceFile, converter: SourceLocationConverter) {
        for declaration in declarations {
            noteConvertible(declaration, parents: parents, file: file, converter: converter)
            if let structDecl = declaration.as(StructDeclSyntax.self) {
                let name = parents + [structDecl.name.text]
                if Self.conforms(structDecl.inheritanceClause, to: "Embedded") {
                    let qualified = name.joined(separator: ".")
                    embeddedDeclarations[qualified] = EmbeddedDeclaration(qualifiedName: qualified, decl: structDecl, file: file, converter: converter)
                }
                collectEmbedded(structDecl.memberBlock.members.map(\.decl), parents: name, file: file, converter: converter)
            } else if let enumDecl = declaration.as(EnumDeclSyntax.self) {
                collectEmbedded(enumDecl.memberBlock.members.map(\.decl), parents: parents + [enumDecl.name.text], file: file, converter: converter)
            } else if let classDecl = declaration.as(ClassDeclSyntax.self) {
                collectEmbedded(classDecl.memberBlock.members.map(\.decl), parents: parents + [classDecl.name.text], file: file, converter: converter)
            } else if let extensionDecl = declaration.as(ExtensionDeclSyntax.self) {
                collectEmbedded(extensionDecl.memberBlock.members.map(\.decl),
                                parents: parents + [extensionDecl.extendedType.trimmedDescription], file: file, converter: converter)
            }
        }
    }

    /// Records a declaration's `PropertyConvertible` conformance and its `StoredValue` alias.
    private mutating func noteConvertible(_ declaration: DeclSyntax, parents: [String], file: SourceFile, converter: SourceLocationConverter) {
        let named: (name: String, clause: InheritanceClauseSyntax?, members: MemberBlockSyntax)?
        if let structDecl = declaration.as(StructDeclSyntax.self) {
            named = (structDecl.name.text, structDecl.inheritanceClause, structDecl.memberBlock)
        } else if let enumDecl = declaration.as(EnumDeclSyntax.self) {
            named = (enumDecl.name.text, enumDecl.inheritanceClause, enumDecl.memberBlock)
        } else if let classDecl = declaration.as(ClassDeclSyntax.self) {
            named = (classDecl.name.text, classDecl.inheritanceClause, classDecl.memberBlock)
        } else if let extensionDecl = declaration.as(ExtensionDeclSyntax.self) {
            // An extension names its type from the top level.
            named = (extensionDecl.extendedType.trimmedDescription, extensionDecl.inheritanceClause, extensionDecl.memberBlock)
        } else {
            named = nil
        }
        guard let named else { return }
        let qualified = declaration.is(ExtensionDeclSyntax.self) ? named.name : (parents + [named.name]).joined(separator: ".")
        for member in named.members.members {
            guard let alias = member.decl.as(TypeAliasDeclSyntax.self), alias.name.text == "StoredValue" else { continue }
            storedValueAliases[qualified] = alias.initializer.value.trimmedDescription
        }
        if Self.conforms(named.clause, to: "PropertyConvertible"), conformances[qualified] == nil,
           let clause = named.clause?.inheritedTypes.first(where: { Self.stripModule($0.type.trimmedDescription).hasSuffix("PropertyConvertible") }) {
            conformances[qualified] = (Syntax(clause), file, converter)
        }
    }

    /// The stored type of the `PropertyConvertible` type a property's written type names
    /// (looked up like embedded types), or nil when it is not one.
    private func convertibleStorage(named written: String, scope: [String]) -> String? {
        for depth in stride(from: scope.count, through: 0, by: -1) {
            let candidate = (scope.prefix(depth) + [written]).joined(separator: ".")
            if let stored = convertibleTypes[candidate] { return stored.flatMap { Self.scalarTypes[Self.stripModule($0)] } ?? "" }
        }
        return nil
    }

    /// The qualified name of the embedded type a property's written type names, looked up
    /// as the compiler does: in the declaring type's scope, then each enclosing one, then
    /// at the top level.
    private func embeddedType(named written: String, scope: [String]) -> String? {
        for depth in stride(from: scope.count, through: 0, by: -1) {
            let candidate = (scope.prefix(depth) + [written]).joined(separator: ".")
            if embeddedDeclarations[candidate] != nil { return candidate }
        }
        return nil
    }

    /// Makes the element codec of `qualifiedName` (and of the embedded types inside it) part
    /// of the generated file; false when the type has errors or holds what elements cannot.
    private mutating func requireDocumentCodec(_ qualifiedName: String, property: String, at node: some SyntaxProtocol,
                                               context: inout FileContext) -> Bool {
        if documentCodecs.contains(where: { $0.qualifiedName == qualifiedName }) { return true }
        guard let leaves = embeddedLeaves(of: qualifiedName, property: property, at: node, context: &context),
              let declaration = embeddedDeclarations[qualifiedName] else { return false }
        if let dictionary = leaves.first(where: { $0.storageType.hasSuffix("Dictionary") }) {
            report(node, "'\(property)' holds '\(qualifiedName)' values in an array, and its leaf '\(dictionary.name)' is a dictionary, which array elements cannot hold; use JSONValue for it", &context)
            return false
        }
        let isPublic = declaration.decl.modifiers.contains { ["public", "open"].contains($0.name.text) }
        documentCodecs.append(DocumentCodecModel(qualifiedName: qualifiedName, access: isPublic ? "public" : "", leaves: leaves))
        for leaf in leaves {
            if let inner = leaf.embeddedType ?? leaf.embeddedArrayElement,
               !requireDocumentCodec(inner, property: property, at: node, context: &context) { return false }
        }
        return true
    }

    /// The leaves of the embedded type `qualifiedName` (analysed once, at the type's own
    /// lines), or nil when it has errors or contains itself.
    private mutating func embeddedLeaves(of qualifiedName: String, property: String, at node: some SyntaxProtocol,
                                         context: inout FileContext) -> [PropertyModel]? {
        if embeddingStack.contains(qualifiedName) {
            report(node, "embedded type '\(qualifiedName)' contains itself through '\(property)': an embedded value needs a fixed shape; link to an entity with ToOne instead", &context)
            return nil
        }
        if let known = embeddedLeaves[qualifiedName] { return known }
        guard let declaration = embeddedDeclarations[qualifiedName] else { return nil }
        embeddedFiles.insert(declaration.file.path)
        embeddingStack.append(qualifiedName)
        defer { embeddingStack.removeLast() }
        var inner = FileContext(file: declaration.file, converter: declaration.converter)
        let errorsBefore = diagnostics.count
        let decl = declaration.decl
        let name = decl.name.text
        if let generics = decl.genericParameterClause {
            report(generics, "embedded type '\(name)' cannot be generic: the generator needs one concrete stored shape", &inner)
        }
        if let hidden = decl.modifiers.first(where: { ["private", "fileprivate"].contains($0.name.text) }) {
            report(hidden, "embedded type '\(name)' cannot be \(hidden.name.text): the generated code in another file must see it", &inner)
        }
        var leaves: [PropertyModel] = []
        for member in decl.memberBlock.members {
            if let initializer = member.decl.as(InitializerDeclSyntax.self) {
                report(initializer.initKeyword,
                       "embedded type '\(name)' declares an initializer inside the struct, which removes the memberwise initializer the generated decoder calls; move the initializer into an extension",
                       &inner)
            } else if let variable = member.decl.as(VariableDeclSyntax.self) {
                leaves += analyzeVariable(variable, owner: "embedded type '\(name)'", scope: qualifiedName.split(separator: ".").map(String.init),
                                          isEntity: false, context: &inner)
            }
        }
        if leaves.isEmpty && diagnostics.count == errorsBefore {
            report(decl.name, "embedded type '\(name)' stores nothing: give it a stored property", &inner)
        }
        var seen: Set<String> = []
        for leaf in leaves where !seen.insert(leaf.storedName ?? leaf.name).inserted {
            report(decl.name, "embedded type '\(name)' stores two properties under the name '\(leaf.storedName ?? leaf.name)'", &inner)
        }
        let result: [PropertyModel]? = diagnostics.count == errorsBefore ? leaves : nil
        embeddedLeaves[qualifiedName] = .some(result)
        return result
    }

    /// Links store their target's stored name: for a target declared with `@StoredAs` in
    /// these sources, that name instead of the simple type name.
    private mutating func resolveRelationTargets() {
        let named = entities.filter { $0.explicitStoredName != nil }
        guard !named.isEmpty else { return }
        for entityIndex in entities.indices {
            for propertyIndex in entities[entityIndex].properties.indices {
                guard let written = entities[entityIndex].properties[propertyIndex].relationTargetType else { continue }
                let owner = entities[entityIndex].qualifiedName.split(separator: ".").dropLast().joined(separator: ".")
                // The written name as seen from the owner's scope, innermost first.
                let candidates = [owner.isEmpty ? written : owner + "." + written, written]
                if let target = named.first(where: { candidates.contains($0.qualifiedName) }) {
                    entities[entityIndex].properties[propertyIndex].relationTarget = target.storedName
                }
            }
        }
    }

    // MARK: Walking declarations

    private struct FileContext {
        let file: SourceFile
        let converter: SourceLocationConverter
        var hadEntityError = false
    }

    private mutating func collectEnums(_ declarations: [DeclSyntax], parents: [String]) {
        for declaration in declarations {
            if let enumDecl = declaration.as(EnumDeclSyntax.self) {
                let name = enumDecl.name.text
                if let raw = enumDecl.inheritanceClause?.inheritedTypes.first?.type.trimmedDescription {
                    let qualified = (parents + [name]).joined(separator: ".")
                    enumRawTypes[qualified] = raw
                    if enumRawTypes[name] == nil { enumRawTypes[name] = raw }
                }
                collectEnums(enumDecl.memberBlock.members.map(\.decl), parents: parents + [name])
            } else if let structDecl = declaration.as(StructDeclSyntax.self) {
                collectEnums(structDecl.memberBlock.members.map(\.decl), parents: parents + [structDecl.name.text])
            } else if let classDecl = declaration.as(ClassDeclSyntax.self) {
                collectEnums(classDecl.memberBlock.members.map(\.decl), parents: parents + [classDecl.name.text])
            } else if let extensionDecl = declaration.as(ExtensionDeclSyntax.self) {
                collectEnums(extensionDecl.memberBlock.members.map(\.decl),
                             parents: parents + [extensionDecl.extendedType.trimmedDescription])
            }
        }
    }

    private mutating func walk(_ declarations: [DeclSyntax], parents: [String], context: inout FileContext) {
        for declaration in declarations {
            if let structDecl = declaration.as(StructDeclSyntax.self) {
                let name = parents + [structDecl.name.text]
                if Self.conformsToEntity(structDecl.inheritanceClause) {
                    if Self.conforms(structDecl.inheritanceClause, to: "Embedded") {
                        report(structDecl.name, "'\(structDecl.name.text)' cannot be both an Entity and Embedded: an entity is stored on its own, an embedded value inside one", &context)
                    }
                    analyzeEntity(structDecl, qualifiedName: name.joined(separator: "."), context: &context)
                } else {
                    reportSyncOutsideEntity(structDecl.attributes, of: "'\(structDecl.name.text)', which is not an Entity", &context)
                }
                walk(structDecl.memberBlock.members.map(\.decl), parents: name, context: &context)
            } else if let classDecl = declaration.as(ClassDeclSyntax.self) {
                reportSyncOutsideEntity(classDecl.attributes, of: "class '\(classDecl.name.text)'", &context)
                if Self.conformsToEntity(classDecl.inheritanceClause) {
                    report(classDecl.classKeyword, "entity '\(classDecl.name.text)' must be a struct: Coffer stores value types", &context)
                }
                walk(classDecl.memberBlock.members.map(\.decl), parents: parents + [classDecl.name.text], context: &context)
            } else if let enumDecl = declaration.as(EnumDeclSyntax.self) {
                reportSyncOutsideEntity(enumDecl.attributes, of: "enum '\(enumDecl.name.text)'", &context)
                if Self.conformsToEntity(enumDecl.inheritanceClause) {
                    report(enumDecl.enumKeyword, "entity '\(enumDecl.name.text)' must be a struct: Coffer stores structs", &context)
                }
                walk(enumDecl.memberBlock.members.map(\.decl), parents: parents + [enumDecl.name.text], context: &context)
            } else if let actorDecl = declaration.as(ActorDeclSyntax.self), Self.conformsToEntity(actorDecl.inheritanceClause) {
                report(actorDecl.actorKeyword, "entity '\(actorDecl.name.text)' must be a struct: Coffer stores structs", &context)
            } else if let extensionDecl = declaration.as(ExtensionDeclSyntax.self) {
                reportSyncOutsideEntity(extensionDecl.attributes, of: "an extension of '\(extensionDecl.extendedType.trimmedDescription)'", &context)
                if Self.conformsToEntity(extensionDecl.inheritanceClause) {
                    report(extensionDecl.extensionKeyword,
                           "declare the Entity conformance of '\(extensionDecl.extendedType.trimmedDescription)' on its struct declaration, where the generator can see its stored properties",
                           &context)
                }
                walk(extensionDecl.memberBlock.members.map(\.decl),
                     parents: parents + [extensionDecl.extendedType.trimmedDescription], context: &context)
            }
        }
    }

    static func conformsToEntity(_ clause: InheritanceClauseSyntax?) -> Bool {
        conforms(clause, to: "Entity")
    }

    static func conforms(_ clause: InheritanceClauseSyntax?, to name: String) -> Bool {
        clause?.inheritedTypes.contains { [name, "Coffer." + name].contains($0.type.trimmedDescription) } ?? false
    }

    /// `@Sync` marks entity structs only: anywhere else it would silently sync nothing.
    private mutating func reportSyncOutsideEntity(_ attributes: AttributeListSyntax, of what: String, _ context: inout FileContext) {
        for attribute in Self.attributes(attributes) where Self.markerName(attribute) == "Sync" {
            report(attribute, "@Sync applies to an entity struct (one declared 'struct X: Entity'), not to \(what)", &context)
        }
    }

    private mutating func report(_ node: some SyntaxProtocol, _ message: String, _ context: inout FileContext) {
        let location = node.startLocation(converter: context.converter)
        diagnostics.append(Diagnostic(file: context.file.path, line: location.line, column: location.column, message: message))
        context.hadEntityError = true
    }

    // MARK: Entities

    private mutating func analyzeEntity(_ decl: StructDeclSyntax, qualifiedName: String, context: inout FileContext) {
        let errorsBefore = diagnostics.count
        let name = decl.name.text
        if let generics = decl.genericParameterClause {
            report(generics, "entity '\(name)' cannot be generic: the generator needs one concrete stored type", &context)
        }
        let access = decl.modifiers.map(\.name.text).first { ["public", "package", "internal", "fileprivate", "private", "open"].contains($0) } ?? ""
        if access == "private" || access == "fileprivate" {
            report(decl.name, "entity '\(name)' cannot be \(access): the generated code in another file must see it", &context)
        }
        var explicitStoredName: String?
        for attribute in Self.attributes(decl.attributes) where Self.markerName(attribute) == "StoredAs" {
            explicitStoredName = stringArgument(attribute, label: nil, context: &context)
        }
        var isSynced = false
        for attribute in Self.attributes(decl.attributes) where Self.markerName(attribute) == "Sync" {
            if attribute.arguments != nil {
                report(attribute, "@Sync takes no arguments: write @Sync on the entity", &context)
            }
            isSynced = true
        }
        for attribute in Self.attributes(decl.attributes) where Self.markers.contains(Self.markerName(attribute)) {
            // A peer macro on a type makes the compiler expand it during top-level name
            // lookup, which turns the generated `static let`s into circular references.
            report(attribute, "@\(Self.markerName(attribute)) applies to properties, not to the entity '\(name)'; to store the entity under another name, write @StoredAs(\"...\") on the type", &context)
        }
        var properties: [PropertyModel] = []
        for member in decl.memberBlock.members {
            if let initializer = member.decl.as(InitializerDeclSyntax.self) {
                report(initializer.initKeyword,
                       "entity '\(name)' declares an initializer inside the struct, which removes the memberwise initializer the generated decoder calls; move the initializer into an extension",
                       &context)
            } else if let variable = member.decl.as(VariableDeclSyntax.self) {
                properties += analyzeVariable(variable, owner: "entity '\(name)'", scope: qualifiedName.split(separator: ".").map(String.init), context: &context)
            }
        }
        if let id = properties.first(where: { $0.name == "id" }) {
            if id.valueType != "Id" && id.valueType != "UInt64" || id.isOptional {
                report(decl.name, "entity '\(name)' must declare 'var id: Id'; its 'id' is '\(id.swiftType)'", &context)
            }
        } else {
            report(decl.name, "entity '\(name)' must declare 'var id: Id = 0' (0 means not stored yet)", &context)
        }
        var seen: Set<String> = []
        for property in properties {
            let stored = property.storedName ?? property.name
            if !seen.insert(stored).inserted {
                report(decl.name, "entity '\(name)' stores two properties under the name '\(stored)'", &context)
            }
        }
        guard diagnostics.count == errorsBefore else { return }
        // `id` first, the rest in declaration order (the memberwise initializer's order).
        let ordered = properties.filter(\.isId) + properties.filter { !$0.isId }
        entities.append(EntityModel(qualifiedName: qualifiedName,
                                    accessModifier: access == "internal" ? "" : (access == "open" ? "public" : access),
                                    properties: ordered, explicitStoredName: explicitStoredName, isSynced: isSynced))
    }

    /// What a `var` or `let` declaration says for all its bindings.
    private struct VariableDeclaration {
        let modifiers: [String]
        let attributes: [AttributeSyntax]
        /// The attributes' marker names, in order.
        let names: [String]
        let isLet: Bool
        var isTransient: Bool { names.contains("Transient") }
    }

    /// The stored properties a declaration of `owner` adds (none for a static or computed
    /// one); a binding that cannot be stored is reported and left out.
    private mutating func analyzeVariable(_ variable: VariableDeclSyntax, owner: String, scope: [String], isEntity: Bool = true,
                                          context: inout FileContext) -> [PropertyModel] {
        let modifiers = variable.modifiers.map(\.name.text)
        if modifiers.contains("static") || modifiers.contains("class") { return [] }
        let attributes = Self.attributes(variable.attributes)
        let declaration = VariableDeclaration(modifiers: modifiers, attributes: attributes, names: attributes.map(Self.markerName),
                                              isLet: variable.bindingSpecifier.tokenKind == .keyword(.let))
        let bindings = Array(variable.bindings)
        var result: [PropertyModel] = []
        for index in bindings.indices {
            if let property = analyzeBinding(bindings, at: index, of: declaration, owner: owner, scope: scope, isEntity: isEntity,
                                             context: &context) {
                result.append(property)
            }
        }
        return result
    }

    /// The property one binding declares: checked that it can be stored, typed, annotated,
    /// and for an embedded value given its leaves.
    private mutating func analyzeBinding(_ bindings: [PatternBindingSyntax], at index: Int, of declaration: VariableDeclaration,
                                         owner: String, scope: [String], isEntity: Bool, context: inout FileContext) -> PropertyModel? {
        let binding = bindings[index]
        guard let pattern = storedPattern(binding, of: declaration, owner: owner, context: &context) else { return nil }
        let name = pattern.identifier.text.trimmingCharacters(in: "`")
        let defaultValue = binding.initializer?.value.trimmedDescription
        guard mayStore(name, at: pattern, defaultValue: defaultValue, of: declaration, owner: owner, context: &context) else { return nil }
        reportForeignAttributes(declaration.attributes, context: &context)
        // `var a, b: Int`: a binding without a type takes the next written one.
        let typeSyntax = binding.typeAnnotation?.type
            ?? bindings[index...].lazy.compactMap { $0.initializer == nil ? $0.typeAnnotation?.type : nil }.first
        guard var property = resolveType(typeSyntax, initializer: binding.initializer?.value, name: name, owner: owner, scope: scope,
                                         at: pattern, context: &context) else {
            return nil
        }
        let modifiers = declaration.modifiers
        property.defaultValue = defaultValue
        property.isId = isEntity && name == "id"
        property.access = modifiers.contains("public") || modifiers.contains("open") ? "public" : (modifiers.contains("package") ? "package" : "")
        if property.isId && declaration.isLet {
            report(pattern, "'id' of \(owner) must be a 'var': put assigns it", &context)
        }
        applyMarkers(declaration.attributes, to: &property, context: &context)
        if let target = property.toManyTarget, !declaration.names.contains("Backlink") {
            // A standalone many-to-many relation, stored in its own tables.
            property.flags = ["relation", "toMany"]
            property.relationTarget = String(target.split(separator: ".").last ?? Substring(target))
            property.relationTargetType = target
        }
        guard isEntity || fitsEmbeddedValue(property, names: declaration.names, owner: owner, at: pattern, context: &context),
              attachEmbeddedLeaves(to: &property, names: declaration.names, at: pattern, context: &context) else {
            return nil
        }
        return property
    }

    /// The binding's single name, or nil (reported) for a computed property or a pattern
    /// that declares several names.
    private mutating func storedPattern(_ binding: PatternBindingSyntax, of declaration: VariableDeclaration, owner: String,
                                        context: inout FileContext) -> IdentifierPatternSyntax? {
        if let accessors = binding.accessorBlock, Self.isComputed(accessors) {
            if let first = declaration.attributes.first {
                report(first, "@\(declaration.names[0]) needs a stored property; '\(binding.pattern.trimmedDescription)' is computed", &context)
            }
            return nil
        }
        guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else {
            report(binding.pattern, "declare stored properties of \(owner) one name at a time", &context)
            return nil
        }
        return pattern
    }

    /// Whether the property is stored at all: `@Transient` ones are not (they need a default
    /// for loaded objects), and lazy, private and fixed `let` ones cannot be (reported).
    private mutating func mayStore(_ name: String, at pattern: IdentifierPatternSyntax, defaultValue: String?,
                                   of declaration: VariableDeclaration, owner: String, context: inout FileContext) -> Bool {
        let modifiers = declaration.modifiers
        if declaration.isTransient {
            if defaultValue == nil {
                report(pattern, "@Transient property '\(name)' needs a default value: loaded objects get it", &context)
            }
            return false
        }
        if modifiers.contains("lazy") {
            report(pattern, "lazy property '\(name)' cannot be stored; mark it @Transient", &context)
            return false
        }
        if modifiers.contains("private") || modifiers.contains("fileprivate") {
            report(pattern, "stored property '\(name)' of \(owner) cannot be private: the generated code reads it from another file", &context)
            return false
        }
        if declaration.isLet && defaultValue != nil {
            report(pattern, "'let \(name)' has a fixed value and cannot be loaded from the store; make it 'var' or mark it @Transient", &context)
            return false
        }
        return true
    }

    /// Reports every attribute that is not one of Coffer's markers.
    private mutating func reportForeignAttributes(_ attributes: [AttributeSyntax], context: inout FileContext) {
        for attribute in attributes {
            let attributeName = Self.markerName(attribute)
            if attributeName == "Sync" {
                report(attribute, "@Sync applies to the entity, not to one of its properties: write it on the struct", &context)
            } else if !Self.markers.contains(attributeName) {
                report(attribute, "@\(attributeName) is not a Coffer annotation; entity properties take @Index, @Unique, @Transient, @Name, @Renamed, @CreatedAt, @UpdatedAt, @Backlink and @FullText", &context)
            }
        }
    }

    /// Whether a property may be a leaf of an embedded value: plain values only, no links
    /// and no timestamps (reported).
    private mutating func fitsEmbeddedValue(_ property: PropertyModel, names: [String], owner: String, at pattern: IdentifierPatternSyntax,
                                            context: inout FileContext) -> Bool {
        if property.relationTarget != nil || property.toManyTarget != nil {
            report(pattern, "'\(property.name)' of \(owner) is a link or relation ('\(property.swiftType)'); embedded values hold plain values: put the link on the entity", &context)
            return false
        }
        if let stamp = names.first(where: { $0 == "CreatedAt" || $0 == "UpdatedAt" }) {
            report(pattern, "@\(stamp) belongs on an entity's own Date property, not inside \(owner)", &context)
            return false
        }
        return true
    }

    /// For an array of embedded values, checks its element has a document codec; for an
    /// embedded value, gives the property its leaves. Neither takes markers but `@Name`.
    /// False when the property cannot be stored (reported).
    private mutating func attachEmbeddedLeaves(to property: inout PropertyModel, names: [String], at pattern: IdentifierPatternSyntax,
                                               context: inout FileContext) -> Bool {
        let name = property.name
        if let element = property.embeddedArrayElement {
            if let marker = names.first(where: { $0 != "Name" && Self.markers.contains($0) }) {
                report(pattern, "@\(marker) cannot annotate '\(name)', an array of embedded values: it is stored as a document and queried by path, not indexed", &context)
                return false
            }
            guard requireDocumentCodec(element, property: name, at: pattern, context: &context) else { return false }
        }
        if let embedded = property.embeddedType {
            let leaves = embeddedLeaves(of: embedded, property: name, at: pattern, context: &context)
            if let marker = names.first(where: { $0 != "Name" && Self.markers.contains($0) }) {
                report(pattern, "@\(marker) cannot annotate the embedded value '\(name)'; annotate its leaves inside '\(embedded)' (only @Name renames the whole value)", &context)
                return false
            }
            guard let leaves else { return false }
            property.children = leaves
        }
        return true
    }

    static func isComputed(_ accessors: AccessorBlockSyntax) -> Bool {
        switch accessors.accessors {
        case .getter: return true
        case .accessors(let list):
            return list.contains { ["get", "set", "_read", "_modify", "unsafeAddress"].contains($0.accessorSpecifier.text) }
        }
    }

    /// Applies the property's markers (flags, stored names, conflict rule, backlink, full
    /// text), then the flags its kind implies, each flag once.
    private mutating func applyMarkers(_ attributes: [AttributeSyntax], to property: inout PropertyModel, context: inout FileContext) {
        for attribute in attributes {
            switch Self.markerName(attribute) {
            case "Index":
                property.flags.append("indexed")
            case "Unique":
                applyUnique(attribute, to: &property, context: &context)
            case "Name":
                property.storedName = stringArgument(attribute, label: nil, context: &context)
            case "Renamed":
                property.renamedFrom = stringArgument(attribute, label: "from", context: &context)
            case "Backlink":
                applyBacklink(attribute, to: &property, context: &context)
            case "FullText":
                applyFullText(attribute, to: &property, context: &context)
            case "CreatedAt", "UpdatedAt":
                let name = Self.markerName(attribute)
                if property.valueType != "Date" {
                    report(attribute, "@\(name) needs a Date property; '\(property.name)' is '\(property.swiftType)'", &context)
                }
                property.flags.append(name == "CreatedAt" ? "createdAt" : "updatedAt")
            default:
                break
            }
        }
        applyImpliedFlags(to: &property, attributes: attributes, context: &context)
    }

    /// `@Unique` and its conflict rule (`.fail` unless given).
    private mutating func applyUnique(_ attribute: AttributeSyntax, to property: inout PropertyModel, context: inout FileContext) {
        if property.storageType.hasSuffix("Array") {
            report(attribute, "@Unique needs a single value; '\(property.name)' is an array ('\(property.swiftType)'): @Index indexes its elements", &context)
        }
        property.flags += ["unique", "indexed"]
        property.onConflict = "fail"
        if case .argumentList(let arguments) = attribute.arguments, let argument = arguments.first {
            let value = argument.expression.trimmedDescription
            if argument.label?.text == "onConflict", [".fail", ".replace", ".update"].contains(value) {
                property.onConflict = String(value.dropFirst())
            } else {
                report(argument, "@Unique takes onConflict: .fail, .replace or .update", &context)
            }
        }
    }

    /// `@Backlink(\Other.link)` on a `ToMany`: the source's link property and entity.
    private mutating func applyBacklink(_ attribute: AttributeSyntax, to property: inout PropertyModel, context: inout FileContext) {
        guard property.toManyTarget != nil else {
            report(attribute, "@Backlink needs a ToMany property; '\(property.name)' is '\(property.swiftType)'", &context)
            return
        }
        guard case .argumentList(let arguments) = attribute.arguments, arguments.count == 1,
              let keyPath = arguments.first?.expression.as(KeyPathExprSyntax.self),
              let last = keyPath.components.last?.component.as(KeyPathPropertyComponentSyntax.self) else {
            report(attribute, "@Backlink takes a key path to the other entity's ToOne: @Backlink(\\Order.customer)", &context)
            return
        }
        property.backlinkProperty = last.declName.baseName.text
        property.flags.append("backlink")
        // The source entity's stored name: selector paths through the backlink
        // (`"orders.total"`) find the source in the catalog by it.
        if let target = property.toManyTarget {
            property.relationTarget = String(target.split(separator: ".").last ?? Substring(target))
            property.relationTargetType = target
        }
    }

    /// `@FullText` on a string, with its tokenizer (`.simple` unless given).
    private mutating func applyFullText(_ attribute: AttributeSyntax, to property: inout PropertyModel, context: inout FileContext) {
        if property.valueType != "String" || property.isEnum {
            report(attribute, "@FullText needs a String or String? property; '\(property.name)' is '\(property.swiftType)'", &context)
            return
        }
        var tokenizer = "simple"
        if case .argumentList(let arguments) = attribute.arguments, !arguments.isEmpty {
            let value = arguments.first?.expression.trimmedDescription ?? ""
            guard arguments.count == 1, arguments.first?.label == nil, [".simple", ".porter"].contains(value) else {
                report(attribute, "@FullText takes one tokenizer: @FullText(.simple) or @FullText(.porter)", &context)
                return
            }
            tokenizer = String(value.dropFirst())
        }
        property.fullText = tokenizer
        property.flags.append("fullText")
    }

    /// The flags a property's kind implies: `id` alone (it takes no markers), a to-one link
    /// indexed, an enum marked; then each flag kept once, in first-seen order.
    private mutating func applyImpliedFlags(to property: inout PropertyModel, attributes: [AttributeSyntax], context: inout FileContext) {
        if property.isId, !property.flags.isEmpty, let first = attributes.first {
            report(first, "'id' is always indexed by the entity table and takes no annotations", &context)
        }
        if property.isId { property.flags = ["id"] }
        if property.relationTarget != nil && property.toManyTarget == nil && !property.flags.contains("relation") {
            property.flags += ["indexed", "relation"]
        }
        if property.isEnum { property.flags.append("enumeration") }
        var unique: [String] = []
        for flag in property.flags where !unique.contains(flag) { unique.append(flag) }
        property.flags = unique
    }

    private mutating func stringArgument(_ attribute: AttributeSyntax, label: String?, context: inout FileContext) -> String? {
        let name = Self.markerName(attribute)
        guard case .argumentList(let arguments) = attribute.arguments, arguments.count == 1,
              let argument = arguments.first, argument.label?.text == label,
              let literal = argument.expression.as(StringLiteralExprSyntax.self),
              literal.segments.count == 1,
              case .stringSegment(let segment) = literal.segments.first,
              !segment.content.text.isEmpty
        else {
            let form = label.map { "\($0): \"...\"" } ?? "\"...\""
            report(attribute, "@\(name) takes one non-empty string literal: @\(name)(\(form))", &context)
            return nil
        }
        return segment.content.text
    }

    static func attributes(_ list: AttributeListSyntax) -> [AttributeSyntax] {
        list.compactMap { element in
            if case .attribute(let attribute) = element { return attribute }
            return nil
        }
    }

    static func markerName(_ attribute: AttributeSyntax) -> String {
        let name = attribute.attributeName.trimmedDescription
        return name.hasPrefix("Coffer.") ? String(name.dropFirst("Coffer.".count)) : name
    }

    // MARK: Types

    /// The model of a property of the written `type` (or, without one, of its initializer's
    /// literal), or nil after reporting why such a property cannot be stored. The kinds of
    /// type are tried in turn: scalars, relations, dictionaries, arrays, then the types the
    /// sources declare (convertible values, embedded values, raw-value enums).
    private mutating func resolveType(
        _ type: TypeSyntax?, initializer: ExprSyntax?, name: String, owner: String, scope: [String],
        at node: some SyntaxProtocol, context: inout FileContext
    ) -> PropertyModel? {
        guard let type else { return inferredType(initializer, name: name, owner: owner, at: node, context: &context) }
        let (inner, optional) = Self.unwrappingOptional(type)
        let written = inner.trimmedDescription
        if inner.is(OptionalTypeSyntax.self) || written.hasPrefix("Optional<") {
            report(node, "property '\(name)' of \(owner) has a nested optional '\(type.trimmedDescription)', which cannot be stored", &context)
            return nil
        }
        let shape = TypeShape(name: name, written: written, optional: optional)
        if let storage = Self.scalarTypes[Self.stripModule(written)] { return shape.model(storage) }
        let match = relationType(inner, shape, owner: owner, at: node, context: &context)
            ?? dictionaryType(inner, shape, owner: owner, at: node, context: &context)
            ?? arrayType(inner, shape, scope: scope)
            ?? declaredType(shape, owner: owner, scope: scope, at: node, context: &context)
        if let match { return match.model }
        report(node, "property '\(name)' of \(owner) has the unsupported type '\(type.trimmedDescription)'; supported: \(Self.supportedList). Mark it @Transient to keep it out of the store", &context)
        return nil
    }

    /// A property's name, written type and optionality, from which each kind of type builds
    /// its model.
    private struct TypeShape {
        let name: String
        let written: String
        let optional: Bool

        func model(_ storage: String, valueType: String? = nil, optional: Bool? = nil, isEnum: Bool = false) -> PropertyModel {
            PropertyModel(name: name, storedName: nil, storageType: storage, valueType: valueType ?? written,
                          isOptional: optional ?? self.optional, isEnum: isEnum, isId: false, defaultValue: nil, flags: [],
                          onConflict: nil, renamedFrom: nil)
        }
    }

    /// What one kind of type made of a property: nil from a kind that does not apply, so the
    /// next is tried.
    private enum TypeMatch {
        case stored(PropertyModel)
        /// The type is of this kind but cannot be stored; the reason is reported.
        case refused

        var model: PropertyModel? {
            if case .stored(let model) = self { return model }
            return nil
        }
    }

    /// `T?` or `Optional<T>` unwrapped once (a nested optional stays wrapped in the result).
    private static func unwrappingOptional(_ type: TypeSyntax) -> (inner: TypeSyntax, optional: Bool) {
        if let wrapped = type.as(OptionalTypeSyntax.self) { return (wrapped.wrappedType, true) }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional",
           let argument = identifier.genericArgumentClause?.arguments.first {
            return (TypeSyntax(fromProtocol: argument.argument.as(TypeSyntax.self) ?? type), true)
        }
        return (type, false)
    }

    /// No written type: inferred from a literal (or a scalar initializer call), as the
    /// compiler would.
    private mutating func inferredType(_ initializer: ExprSyntax?, name: String, owner: String, at node: some SyntaxProtocol,
                                       context: inout FileContext) -> PropertyModel? {
        let shape = TypeShape(name: name, written: "", optional: false)
        switch initializer?.kind {
        case .integerLiteralExpr: return shape.model("int", valueType: "Int")
        case .floatLiteralExpr: return shape.model("double", valueType: "Double")
        case .stringLiteralExpr: return shape.model("string", valueType: "String")
        case .booleanLiteralExpr: return shape.model("bool", valueType: "Bool")
        default:
            if let call = initializer?.as(FunctionCallExprSyntax.self),
               let storage = Self.scalarTypes[call.calledExpression.trimmedDescription] {
                return shape.model(storage, valueType: call.calledExpression.trimmedDescription)
            }
            report(node, "property '\(name)' of \(owner) needs a written type: the generator cannot infer it", &context)
            return nil
        }
    }

    /// `ToMany<T>` (not optional) and `ToOne<T>` (never optional: it holds no link by itself).
    private mutating func relationType(_ inner: TypeSyntax, _ shape: TypeShape, owner: String, at node: some SyntaxProtocol,
                                       context: inout FileContext) -> TypeMatch? {
        guard let identifier = inner.as(IdentifierTypeSyntax.self),
              let argument = identifier.genericArgumentClause?.arguments.first else { return nil }
        let target = argument.argument.trimmedDescription
        if identifier.name.text == "ToMany", !shape.optional {
            var many = shape.model("uint64", optional: false)
            many.toManyTarget = target
            return .stored(many)
        }
        guard identifier.name.text == "ToOne" else { return nil }
        if shape.optional {
            report(node, "property '\(shape.name)' of \(owner) is an optional ToOne; ToOne holds no link by itself: write 'ToOne<...> = nil'", &context)
            return .refused
        }
        var link = shape.model("uint64", optional: false)
        link.relationTarget = String(target.split(separator: ".").last ?? Substring(target))
        link.relationTargetType = target
        link.flags = ["indexed", "relation"]
        return .stored(link)
    }

    /// `[String: V]` for the value types a stored dictionary holds.
    private mutating func dictionaryType(_ inner: TypeSyntax, _ shape: TypeShape, owner: String, at node: some SyntaxProtocol,
                                         context: inout FileContext) -> TypeMatch? {
        guard let (key, value) = Self.dictionaryTypes(inner) else { return nil }
        guard Self.stripModule(key) == "String" else {
            report(node, "property '\(shape.name)' of \(owner) is a dictionary keyed by '\(key)'; stored dictionaries are keyed by String", &context)
            return .refused
        }
        guard let storage = Self.dictionaryTypes[Self.stripModule(value)] else {
            report(node, "property '\(shape.name)' of \(owner) is a dictionary of '\(value)'; stored dictionaries hold String, Int, Double or Bool values (use JSONValue for anything else)", &context)
            return .refused
        }
        return .stored(shape.model(storage))
    }

    /// An array of scalars, of raw-value enums, or of embedded values (stored as a document:
    /// an array of objects whose members are the leaves).
    private func arrayType(_ inner: TypeSyntax, _ shape: TypeShape, scope: [String]) -> TypeMatch? {
        guard let element = Self.arrayElement(inner) else { return nil }
        if let storage = Self.arrayTypes[Self.stripModule(element)] { return .stored(shape.model(storage)) }
        let bare = Self.stripModule(element)
        if let raw = enumRawTypes[bare] ?? enumRawTypes[String(bare.split(separator: ".").last ?? "")],
           let storage = Self.arrayTypes[Self.stripModule(raw)] {
            return .stored(shape.model(storage, isEnum: true))
        }
        if let embedded = embeddedType(named: element, scope: scope) {
            var elements = shape.model("json")
            elements.embeddedArrayElement = embedded
            return .stored(elements)
        }
        return nil
    }

    /// A type the sources declare: a `PropertyConvertible` conformance, an embedded value, or a
    /// raw-value enum whose raw value is a scalar (not Data or UUID).
    private mutating func declaredType(_ shape: TypeShape, owner: String, scope: [String], at node: some SyntaxProtocol,
                                       context: inout FileContext) -> TypeMatch? {
        let bare = Self.stripModule(shape.written)
        if let storage = convertibleStorage(named: bare, scope: scope) {
            // Its conformance reported a missing or unsupported StoredValue already.
            guard !storage.isEmpty else {
                report(node, "property '\(shape.name)' of \(owner) has the type '\(bare)', whose StoredValue is missing or not a scalar type entity properties have", &context)
                return .refused
            }
            return .stored(shape.model(storage))
        }
        if let embedded = embeddedType(named: bare, scope: scope) {
            var value = shape.model("bool")
            value.embeddedType = embedded
            value.flags = ["embedded"]
            return .stored(value)
        }
        if let raw = enumRawTypes[bare] ?? enumRawTypes[String(bare.split(separator: ".").last ?? "")],
           let storage = Self.scalarTypes[Self.stripModule(raw)], raw != "Data", raw != "UUID" {
            return .stored(shape.model(storage, isEnum: true))
        }
        return nil
    }

    static func stripModule(_ name: String) -> String {
        for prefix in ["Swift.", "Foundation.", "Coffer."] where name.hasPrefix(prefix) {
            return String(name.dropFirst(prefix.count))
        }
        return name
    }

    /// The key and value types of `[K: V]` or `Dictionary<K, V>`.
    static func dictionaryTypes(_ type: TypeSyntax) -> (String, String)? {
        if let dictionary = type.as(DictionaryTypeSyntax.self) {
            return (dictionary.key.trimmedDescription, dictionary.value.trimmedDescription)
        }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Dictionary",
           let arguments = identifier.genericArgumentClause?.arguments, arguments.count == 2 {
            return (arguments.first?.argument.trimmedDescription ?? "", arguments.last?.argument.trimmedDescription ?? "")
        }
        return nil
    }

    static func arrayElement(_ type: TypeSyntax) -> String? {
        if let array = type.as(ArrayTypeSyntax.self) { return array.element.trimmedDescription }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Array",
           let argument = identifier.genericArgumentClause?.arguments.first {
            return argument.argument.trimmedDescription
        }
        return nil
    }
}

private extension String {
    func trimmingCharacters(in character: Character) -> String {
        var text = Substring(self)
        while text.first == character { text = text.dropFirst() }
        while text.last == character { text = text.dropLast() }
        return String(text)
    }
}

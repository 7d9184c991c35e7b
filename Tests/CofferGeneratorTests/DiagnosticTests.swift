import CofferGeneratorCore
import Foundation
import Testing

@Suite struct DiagnosticTests {
    func diagnose(_ source: String) -> [String] {
        Generator.generate([SourceFile(path: "Model.swift", text: source)]).diagnostics.map(\.description)
    }

    @Test func unsupportedTypeIsReportedAtItsLine() {
        let messages = diagnose("""
        import Coffer
        struct Thing: Entity {
            var id: Id = 0
            var children: [Thing] = []
        }
        """)
        #expect(messages == [
            "Model.swift:4:9: error: property 'children' of entity 'Thing' has the unsupported type '[Thing]'; supported: Bool, Int, Int8-Int64, UInt, UInt8-UInt64, Float, Double, String, Date, Data, UUID, arrays of those but Data, enums with a raw type of those and arrays of them, JSONValue, [String: String/Int/Double/Bool], structs marked Embedded, PropertyConvertible types, and optionals of them. Mark it @Transient to keep it out of the store",
        ])
    }

    @Test func embeddedTypeErrorsPointAtTheUsersLines() {
        let recursive = diagnose("""
        struct Node: Embedded {
            var label: String
            var next: Node?
        }
        struct Tree: Entity {
            var id: Id = 0
            var root: Node
        }
        """)
        #expect(recursive == [
            "Model.swift:3:9: error: embedded type 'Node' contains itself through 'next': an embedded value needs a fixed shape; link to an entity with ToOne instead",
        ])
        let indirect = diagnose("""
        struct A: Embedded { var b: B }
        struct B: Embedded { var a: A? }
        struct Holder: Entity {
            var id: Id = 0
            var a: A
        }
        """)
        #expect(indirect == ["Model.swift:2:26: error: embedded type 'A' contains itself through 'a': an embedded value needs a fixed shape; link to an entity with ToOne instead"])
        let arrays = diagnose("""
        struct Tag: Embedded { var name: String; var extra: [String: Int] = [:] }
        struct Note: Embedded { var text: String }
        struct Post: Entity {
            var id: Id = 0
            var tags: [Tag] = []
            @Index var notes: [Note] = []
        }
        """)
        #expect(arrays == [
            "Model.swift:5:9: error: 'tags' holds 'Tag' values in an array, and its leaf 'extra' is a dictionary, which array elements cannot hold; use JSONValue for it",
            "Model.swift:6:16: error: @Index cannot annotate 'notes', an array of embedded values: it is stored as a document and queried by path, not indexed",
        ])
        let inside = diagnose("""
        struct Bad: Embedded {
            var owner: ToOne<Holder> = nil
            @CreatedAt var made: Date
            var weird: NSObject
            init() { made = Date() }
        }
        struct Holder: Entity {
            var id: Id = 0
            @Index var bad: Bad
        }
        """)
        #expect(inside == [
            "Model.swift:2:9: error: 'owner' of embedded type 'Bad' is a link or relation ('ToOne<Holder>'); embedded values hold plain values: put the link on the entity",
            "Model.swift:3:20: error: @CreatedAt belongs on an entity's own Date property, not inside embedded type 'Bad'",
            "Model.swift:4:9: error: property 'weird' of embedded type 'Bad' has the unsupported type 'NSObject'; supported: Bool, Int, Int8-Int64, UInt, UInt8-UInt64, Float, Double, String, Date, Data, UUID, arrays of those but Data, enums with a raw type of those and arrays of them, JSONValue, [String: String/Int/Double/Bool], structs marked Embedded, PropertyConvertible types, and optionals of them. Mark it @Transient to keep it out of the store",
            "Model.swift:5:5: error: embedded type 'Bad' declares an initializer inside the struct, which removes the memberwise initializer the generated decoder calls; move the initializer into an extension",
            "Model.swift:9:16: error: @Index cannot annotate the embedded value 'bad'; annotate its leaves inside 'Bad' (only @Name renames the whole value)",
        ])
        let hidden = diagnose("private struct Secret: Embedded { var x: Int }\nstruct Keeper: Entity {\n    var id: Id = 0\n    var secret: Secret\n}")
        #expect(hidden == ["Model.swift:1:1: error: embedded type 'Secret' cannot be private: the generated code in another file must see it"])
        let both = diagnose("struct Both: Entity, Embedded {\n    var id: Id = 0\n}")
        #expect(both == ["Model.swift:1:8: error: 'Both' cannot be both an Entity and Embedded: an entity is stored on its own, an embedded value inside one"])
    }

    @Test func uniqueArraysAreRefused() {
        let messages = diagnose("struct Post: Entity {\n    var id: Id = 0\n    @Unique var tags: [String] = []\n}")
        #expect(messages == ["Model.swift:3:5: error: @Unique needs a single value; 'tags' is an array ('[String]'): @Index indexes its elements"])
    }

    @Test func aConverterWithoutItsStoredValueIsRefused() {
        let messages = diagnose("""
        struct Color: PropertyConvertible {
            init(storedValue: String) throws {}
            var storedValue: String { "" }
        }
        struct Paint: Entity {
            var id: Id = 0
            var color: Color
        }
        """)
        #expect(messages == [
            "Model.swift:1:15: error: 'Color' conforms to PropertyConvertible but declares no 'typealias StoredValue = ...': the generator needs it (in the type or an extension in this target) to know how the value is stored",
            "Model.swift:7:9: error: property 'color' of entity 'Paint' has the type 'Color', whose StoredValue is missing or not a scalar type entity properties have",
        ])
        let fine = diagnose("""
        struct Money: PropertyConvertible { var cents: Int64 }
        extension Money { typealias StoredValue = Int64 }
        struct Wallet: Entity {
            var id: Id = 0
            var balance: Money
            var site: URL?
            var total: Decimal = 0
        }
        """)
        #expect(fine.isEmpty)
    }

    @Test func unsupportedDictionariesAreRefused() {
        let messages = diagnose("struct Doc: Entity {\n    var id: Id = 0\n    var byNumber: [Int: String] = [:]\n    var nested: [String: [String]] = [:]\n}")
        #expect(messages == [
            "Model.swift:3:9: error: property 'byNumber' of entity 'Doc' is a dictionary keyed by 'Int'; stored dictionaries are keyed by String",
            "Model.swift:4:9: error: property 'nested' of entity 'Doc' is a dictionary of '[String]'; stored dictionaries hold String, Int, Double or Bool values (use JSONValue for anything else)",
        ])
    }

    @Test func genericEntityIsRefused() {
        let messages = diagnose("struct Box<T>: Entity {\n    var id: Id = 0\n}")
        #expect(messages == ["Model.swift:1:11: error: entity 'Box' cannot be generic: the generator needs one concrete stored type"])
    }

    @Test func missingOrWrongIdIsRefused() {
        #expect(diagnose("struct A: Entity {\n    var name: String\n}") ==
            ["Model.swift:1:8: error: entity 'A' must declare 'var id: Id = 0' (0 means not stored yet)"])
        #expect(diagnose("struct B: Entity {\n    var id: String\n}") ==
            ["Model.swift:1:8: error: entity 'B' must declare 'var id: Id'; its 'id' is 'String'"])
        #expect(diagnose("struct C: Entity {\n    let id: Id\n}") ==
            ["Model.swift:2:9: error: 'id' of entity 'C' must be a 'var': put assigns it"])
    }

    @Test func malformedAnnotationsAreRefused() {
        let messages = diagnose("""
        struct D: Entity {
            var id: Id = 0
            @Name(prefix + "x") var a: String
            @Unique(onConflict: .ignore) var b: String
            @CreatedAt var c: Int = 0
            @Transient var d: Int
            @Published var e: Int = 0
        }
        """)
        #expect(messages == [
            "Model.swift:3:5: error: @Name takes one non-empty string literal: @Name(\"...\")",
            "Model.swift:4:13: error: @Unique takes onConflict: .fail, .replace or .update",
            "Model.swift:5:5: error: @CreatedAt needs a Date property; 'c' is 'Int'",
            "Model.swift:6:20: error: @Transient property 'd' needs a default value: loaded objects get it",
            "Model.swift:7:5: error: @Published is not a Coffer annotation; entity properties take @Index, @Unique, @Transient, @Name, @Renamed, @CreatedAt, @UpdatedAt, @Backlink and @FullText",
        ])
    }

    @Test func fullTextNeedsTextAndOneTokenizer() {
        let messages = diagnose("""
        struct F: Entity {
            var id: Id = 0
            @FullText var count: Int = 0
            @FullText(.snowball) var body: String = ""
            @FullText(.porter, .simple) var title: String = ""
            @FullText(tokenizer: .porter) var note: String = ""
            @FullText(.porter) var fine: String?
        }
        """)
        #expect(messages == [
            "Model.swift:3:5: error: @FullText needs a String or String? property; 'count' is 'Int'",
            "Model.swift:4:5: error: @FullText takes one tokenizer: @FullText(.simple) or @FullText(.porter)",
            "Model.swift:5:5: error: @FullText takes one tokenizer: @FullText(.simple) or @FullText(.porter)",
            "Model.swift:6:5: error: @FullText takes one tokenizer: @FullText(.simple) or @FullText(.porter)",
        ])
    }

    @Test func structuralProblemsAreRefused() {
        let messages = diagnose("""
        final class K: Entity { var id: Id = 0 }
        struct L: Entity {
            var id: Id = 0
            init() {}
        }
        struct M: Entity {
            var id: Id = 0
            private var secret: Int = 0
            let fixed: Int = 3
            var inferred = [1, 2]
            var nested: Int??
        }
        """)
        #expect(messages == [
            "Model.swift:1:7: error: entity 'K' must be a struct: Coffer stores value types",
            "Model.swift:4:5: error: entity 'L' declares an initializer inside the struct, which removes the memberwise initializer the generated decoder calls; move the initializer into an extension",
            "Model.swift:8:17: error: stored property 'secret' of entity 'M' cannot be private: the generated code reads it from another file",
            "Model.swift:9:9: error: 'let fixed' has a fixed value and cannot be loaded from the store; make it 'var' or mark it @Transient",
            "Model.swift:10:9: error: property 'inferred' of entity 'M' needs a written type: the generator cannot infer it",
            "Model.swift:11:9: error: property 'nested' of entity 'M' has a nested optional 'Int??', which cannot be stored",
        ])
    }

    @Test func backlinkAnnotationErrors() {
        #expect(diagnose("struct T: Entity {\n    var id: Id = 0\n    var kids: ToMany<K> = []\n    @Backlink(\\K.t) var n: Int = 0\n    @Backlink(K.t) var m: ToMany<K> = []\n}") == [
            "Model.swift:4:5: error: @Backlink needs a ToMany property; 'n' is 'Int'",
            "Model.swift:5:5: error: @Backlink takes a key path to the other entity's ToOne: @Backlink(\\Order.customer)",
        ])
    }

    @Test func optionalToOneIsRefused() {
        #expect(diagnose("struct O: Entity {\n    var id: Id = 0\n    var c: ToOne<C>? = nil\n}") == [
            "Model.swift:3:9: error: property 'c' of entity 'O' is an optional ToOne; ToOne holds no link by itself: write 'ToOne<...> = nil'",
        ])
    }

    @Test func errorsBecomeCompilerErrorsAtTheSourceLine() {
        let result = Generator.generate([SourceFile(path: "/src/Model.swift", text: "struct Z: Entity {\n    var id: Id = 0\n    var x: Set<Int>\n}")])
        #expect(result.code.contains("#sourceLocation(file: \"/src/Model.swift\", line: 3)\n#error(\"property 'x' of entity 'Z' has the unsupported type"))
        #expect(!result.code.contains("extension Z"))
    }
}

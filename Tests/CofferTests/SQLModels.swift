import Coffer
import Foundation

/// The model of the Smart SQL tests: SmartStore's guide's employees and departments, with
/// indexed and plain, optional and required properties of each SQL class, a link, a
/// many-to-many relation, a full-text property and an `@UpdatedAt`.
enum SQLModel {
    @StoredAs("Department")
    struct Department: Entity {
        var id: Id = 0
        @Index var code: String = ""
        var name: String = ""
        var budget: Int?
    }

    @StoredAs("Employee")
    struct Employee: Entity {
        var id: Id = 0
        @Index var name: String = ""
        var department: ToOne<SQLModel.Department> = nil
        @Index var salary: Int = 0
        var bonus: Double?
        var city: String?
        @Index var grade: Int?
        var active: Bool = true
        var skills: ToMany<SQLModel.Skill> = []
        @FullText(.simple) var notes: String = ""
        @UpdatedAt var modified: Date = .distantPast
    }

    @StoredAs("Skill")
    struct Skill: Entity {
        var id: Id = 0
        var label: String = ""
        @Backlink(\SQLModel.Employee.skills) var holders: ToMany<SQLModel.Employee> = []
    }
}

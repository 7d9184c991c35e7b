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

    /// More stored fields than a statement's loop can number in a byte: a statement reading
    /// them all must run, not trap.
    @StoredAs("Wide")
    struct Wide: Entity {
        var id: Id = 0
        var f0: Int = 0
        var f1: Int = 0
        var f2: Int = 0
        var f3: Int = 0
        var f4: Int = 0
        var f5: Int = 0
        var f6: Int = 0
        var f7: Int = 0
        var f8: Int = 0
        var f9: Int = 0
        var f10: Int = 0
        var f11: Int = 0
        var f12: Int = 0
        var f13: Int = 0
        var f14: Int = 0
        var f15: Int = 0
        var f16: Int = 0
        var f17: Int = 0
        var f18: Int = 0
        var f19: Int = 0
        var f20: Int = 0
        var f21: Int = 0
        var f22: Int = 0
        var f23: Int = 0
        var f24: Int = 0
        var f25: Int = 0
        var f26: Int = 0
        var f27: Int = 0
        var f28: Int = 0
        var f29: Int = 0
        var f30: Int = 0
        var f31: Int = 0
        var f32: Int = 0
        var f33: Int = 0
        var f34: Int = 0
        var f35: Int = 0
        var f36: Int = 0
        var f37: Int = 0
        var f38: Int = 0
        var f39: Int = 0
        var f40: Int = 0
        var f41: Int = 0
        var f42: Int = 0
        var f43: Int = 0
        var f44: Int = 0
        var f45: Int = 0
        var f46: Int = 0
        var f47: Int = 0
        var f48: Int = 0
        var f49: Int = 0
        var f50: Int = 0
        var f51: Int = 0
        var f52: Int = 0
        var f53: Int = 0
        var f54: Int = 0
        var f55: Int = 0
        var f56: Int = 0
        var f57: Int = 0
        var f58: Int = 0
        var f59: Int = 0
        var f60: Int = 0
        var f61: Int = 0
        var f62: Int = 0
        var f63: Int = 0
        var f64: Int = 0
        var f65: Int = 0
        var f66: Int = 0
        var f67: Int = 0
        var f68: Int = 0
        var f69: Int = 0
        var f70: Int = 0
        var f71: Int = 0
        var f72: Int = 0
        var f73: Int = 0
        var f74: Int = 0
        var f75: Int = 0
        var f76: Int = 0
        var f77: Int = 0
        var f78: Int = 0
        var f79: Int = 0
        var f80: Int = 0
        var f81: Int = 0
        var f82: Int = 0
        var f83: Int = 0
        var f84: Int = 0
        var f85: Int = 0
        var f86: Int = 0
        var f87: Int = 0
        var f88: Int = 0
        var f89: Int = 0
        var f90: Int = 0
        var f91: Int = 0
        var f92: Int = 0
        var f93: Int = 0
        var f94: Int = 0
        var f95: Int = 0
        var f96: Int = 0
        var f97: Int = 0
        var f98: Int = 0
        var f99: Int = 0
        var f100: Int = 0
        var f101: Int = 0
        var f102: Int = 0
        var f103: Int = 0
        var f104: Int = 0
        var f105: Int = 0
        var f106: Int = 0
        var f107: Int = 0
        var f108: Int = 0
        var f109: Int = 0
        var f110: Int = 0
        var f111: Int = 0
        var f112: Int = 0
        var f113: Int = 0
        var f114: Int = 0
        var f115: Int = 0
        var f116: Int = 0
        var f117: Int = 0
        var f118: Int = 0
        var f119: Int = 0
        var f120: Int = 0
        var f121: Int = 0
        var f122: Int = 0
        var f123: Int = 0
        var f124: Int = 0
        var f125: Int = 0
        var f126: Int = 0
        var f127: Int = 0
        var f128: Int = 0
        var f129: Int = 0
    }
}

@testable import Coffer
import Foundation
import Testing

@Suite struct ManyToManyTests {
    @Test func addRemoveAndReadBothDirections() throws {
        try withStore { (store: Store) throws in
            let students = store.box(for: Student.self)
            let teachers = store.box(for: Teacher.self)
            var ada = Student(name: "Ada")
            ada.teachers.append(Teacher(name: "Grace"))
            ada.teachers.append(Teacher(name: "Alan"))
            try students.put(&ada)
            #expect(try teachers.count() == 2)
            #expect(ada.teachers.map(\.id) == [1, 2])
            var bob = Student(name: "Bob")
            bob.teachers.append(try #require(try teachers.get(1)))
            try students.put(&bob)

            let loadedAda = try #require(try students.get(ada.id))
            #expect(loadedAda.teachers.map(\.name) == ["Grace", "Alan"])
            let grace = try #require(try teachers.get(1))
            #expect(grace.students.map(\.name) == ["Ada", "Bob"])
            #expect(try teachers.get(2)?.students.map(\.name) == ["Ada"])

            var changed = loadedAda
            try changed.teachers.remove(at: 0)
            try students.put(&changed)
            #expect(try students.get(ada.id)?.teachers.map(\.name) == ["Alan"])
            #expect(try teachers.get(1)?.students.map(\.name) == ["Bob"])
            // Putting an owner whose relation was not touched keeps the relation.
            var renamed = try #require(try students.get(bob.id))
            renamed.name = "Robert"
            try students.put(&renamed)
            #expect(try teachers.get(1)?.students.map(\.name) == ["Robert"])
        }
    }

    @Test func removingEitherSideRemovesTheRows() throws {
        try withStore { (store: Store) throws in
            let students = store.box(for: Student.self)
            let teachers = store.box(for: Teacher.self)
            let grace = try teachers.put(Teacher(name: "Grace"))
            let alan = try teachers.put(Teacher(name: "Alan"))
            var ada = Student(name: "Ada", teachers: [try #require(try teachers.get(grace)), try #require(try teachers.get(alan))])
            try students.put(&ada)
            var bob = Student(name: "Bob", teachers: [try #require(try teachers.get(grace))])
            try students.put(&bob)
            try teachers.remove(grace)
            #expect(try students.get(ada.id)?.teachers.map(\.name) == ["Alan"])
            #expect(try students.get(bob.id)?.teachers.isEmpty == true)
            try students.remove(ada.id)
            #expect(try teachers.get(alan)?.students.isEmpty == true)
            try students.put(Student(name: "Cy", teachers: [try #require(try teachers.get(alan))]))
            try teachers.removeAll()
            #expect(try students.all().allSatisfy { $0.teachers.isEmpty })
        }
    }

    @Test func linksAcrossManyToManyBothWays() throws {
        var rng = SplitMix64(state: 3)
        try withStore { (store: Store) throws in
            let students = store.box(for: Student.self)
            let teachers = store.box(for: Teacher.self)
            let teacherIds = try teachers.put((0..<8).map { Teacher(name: "t\($0 % 3)") })
            let allTeachers = try teachers.all()
            var pairs: [(Id, Id)] = []
            for index in 0..<30 {
                var student = Student(name: "s\(index % 4)")
                for teacher in allTeachers where Int.random(in: 0..<4, using: &rng) == 0 { student.teachers.append(teacher) }
                try students.put(&student)
                pairs += student.teachers.map { (student.id, $0.id) }
            }
            let allStudents = try students.all()
            for name in ["t0", "t1", "t2"] {
                let matching = Set(allTeachers.filter { $0.name == name }.map(\.id))
                let expected = Set(pairs.filter { matching.contains($0.1) }.map(\.0)).sorted()
                let query = try students.query().link(Student.teachers) { Teacher.name == name }.build()
                #expect(try query.findIds() == expected)
                #expect(query.describe().contains("link teachers -> Teacher"))
            }
            for name in ["s0", "s3"] {
                let matching = Set(allStudents.filter { $0.name == name }.map(\.id))
                let expected = Set(pairs.filter { matching.contains($0.0) }.map(\.1)).sorted()
                let query = try teachers.query().link(Teacher.students) { Student.name == name }.build()
                #expect(try query.findIds() == expected)
            }
            #expect(teacherIds.count == 8)
        }
    }
}

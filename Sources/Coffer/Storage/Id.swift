/// The identifier of a stored object. `0` means "not stored yet".
///
/// ```swift
/// var person = Person(firstName: "Ada")   // person.id == 0
/// try people.put(&person)                 // person.id is now 1, 2, ...
/// ```
public typealias Id = UInt64

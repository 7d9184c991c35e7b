// The Relations article's examples: links, backlinks and a many-to-many relation.
import Coffer
import DocSupport
import Foundation

try enterWorkplace("Relations")
let store = try Store(directory: "shop.coffer")
let orders = store.box(for: Order.self)
let customers = store.box(for: Customer.self)
let students = store.box(for: Student.self)
let startOfToday = Calendar.current.startOfDay(for: Date())

struct Customer: Entity {
    var id: Id = 0
    @Index var name: String
    @Backlink(\Order.customer) var orders: ToMany<Order> = []   // read side of Order.customer
}

struct Order: Entity {
    var id: Id = 0
    var date: Date
    var total: Double
    var customer: ToOne<Customer> = nil     // stored as the customer's id, always indexed
}

var order = Order(date: Date(), total: 9.5)
order.customer.target = Customer(name: "Joe")   // unsaved: stored first, in the same transaction
try orders.put(&order)
let joe = try orders.get(order.id)?.customer.target   // Joe, loaded from the store when read

let joesOrdersToday = try orders.query { Order.date > startOfToday }
    .link(Order.customer) { Customer.name == "Joe" }   // the customer's index, then Order.customer's
    .build()
let joeId = order.customer.targetId ?? 0              // set when the put stored Joe
let joesOrNobodys = try orders.query { Order.customer == joeId || Order.customer.isNil() }.build()
let bigOrJoes = try orders.query { Order.total > 100 || Order.customer.linked { Customer.name == "Joe" } }.build()
let modest = try customers.query { !Customer.orders.linked { Order.total > 100 } }.build()   // no big order

let rows = try joesOrdersToday.select(Order.total, Order.date).find()   // [(Double, Date)]
let bigSpenders = try customers.query().link(Customer.orders) { Order.total > 100 }.build()

struct Student: Entity {
    var id: Id = 0
    var name: String
    var teachers: ToMany<Teacher> = []                         // many-to-many, own tables
}
struct Teacher: Entity {
    var id: Id = 0
    var name: String
    @Backlink(\Student.teachers) var students: ToMany<Student> = []
}
var ada = Student(name: "Ada")
ada.teachers.append(Teacher(name: "Grace"))
try students.put(&ada)                                         // stores Grace and the pair
let gracesStudents = try students.query().link(Student.teachers) { Teacher.name == "Grace" }.build()

check(joe?.name == "Joe", "the link's target is loaded")
check(try joesOrdersToday.count() == 1 && rows.count == 1 && rows[0].0 == 9.5, "the link step and the projection")
check(try joesOrNobodys.count() == 1 && (try bigOrJoes.count()) == 1 && (try modest.count()) == 1, "link conditions")
check(try bigSpenders.count() == 0, "no customer has a big order")
check(try gracesStudents.find().map(\.name) == ["Ada"], "the many-to-many relation is followed")
try store.close()
try leaveWorkplace()

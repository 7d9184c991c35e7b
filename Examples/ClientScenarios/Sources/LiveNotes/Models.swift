import Coffer
import Foundation

struct Note: Entity {
    var id: Id = 0
    @Index var folder: String
    var title: String
    var pinned = false
}

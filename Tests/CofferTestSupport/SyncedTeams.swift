import Coffer

/// Synced teams with a many-to-many relation to synced members: the model of the tests that
/// change, merge, park and send to-many relations (in both test targets).
///
/// ```swift
/// var team = SyncedTeams.Team(name: "deck")
/// var ann = SyncedTeams.Member(name: "ann")
/// try store.box(for: SyncedTeams.Member.self).put(&ann)
/// team.members.append(ann)
/// try store.box(for: SyncedTeams.Team.self).put(&team)
/// ```
package enum SyncedTeams {
    @Sync
    package struct Team: Entity {
        package var id: Id = 0
        package var name = ""
        package var members: ToMany<SyncedTeams.Member> = []
    }

    @Sync
    package struct Member: Entity {
        package var id: Id = 0
        package var name = ""
    }
}

// The initializers other modules call are in extensions (one inside the struct would
// remove the memberwise initializer the generated decoder calls).
extension SyncedTeams.Team {
    package init(name: String) {
        self.name = name
    }
}

extension SyncedTeams.Member {
    package init(name: String) {
        self.name = name
    }
}

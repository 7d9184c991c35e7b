// The Full-Text Search article's example.
import Coffer
import DocSupport
import Foundation

try enterWorkplace("FullText")
let store = try Store(directory: "articles.coffer")
let articles = store.box(for: Article.self)
var shelf = [
    Article(title: "Doctor Books", body: "The doctor reads books about books.", year: 2010),
    Article(title: "Night", body: "A horror story: the doctor is a vampire.", year: 1990),
    Article(title: nil, body: "Gardening for beginners.", year: 2020),
]
try articles.put(&shelf)

struct Article: Entity {
    var id: Id = 0
    @FullText(.simple) var title: String?
    @FullText(.porter) var body: String = ""
    var year: Int
}

let recent = try articles.query { Article.body.matches("doctor books") && Article.year > 2000 }.build().find()
let anywhere = try articles.query { .matchesText("\"is a doctor\" OR doc*") }.build().find()   // every @FullText property
let ranked = try articles.query { Article.body.matches("doctor -horror") }.build().findRanked(limit: 10)
for (article, score) in ranked { print(score, article.title ?? "") }

check(recent.map(\.year) == [2010], "words and a condition")
check(anywhere.count == 2, "a phrase or a prefix in any property")
check(ranked.map(\.0.year) == [2010], "ranked, without horror")
try store.close()
try leaveWorkplace()

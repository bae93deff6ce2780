import Foundation
import Logging
import IslandBridge
import IslandKit
import IslandProtocol
import OrderedCollections
import OrderedJSON

/// The book's commands as calls to islandd (IslandKit), and what each call's outcome tells
/// the book.
extension ActivityBook.Command {
    /// Runs one of the book's commands against the daemon.
    func run(on connection: IslandConnection, logger: Logger) async -> ActivityBook.Outcome {
        do {
            switch self {
            case .request(_, let key, let type, let attributes, let content):
                let sourceApp = SourceApp.verifiedEntry(in: attributes)
                let activity: ActivitySnapshot, created: Bool
                do {
                    (activity, created) = try await connection.request(
                        type: type, attributes: attributes, content: content.raw,
                        key: key, ownerGone: .stale, sourceApp: sourceApp)
                } catch let error as ActivityAuthorizationError where sourceApp.map({ Self.refuses($0, error) }) == true {
                    // An islandd that does not let the bridge speak for the app (one older than
                    // `sourceApp`, one whose desktop entries differ from the bridge's, one that
                    // does not recognise the bridge): the card is headed by the bridge, and the
                    // layout says which kind of source it is. Said, so the user can see why.
                    logger.notice(
                        "islandd does not let the bridge head this card with the app it verified; the bridge heads it",
                        metadata: ["sourceApp": "\(sourceApp ?? "")", "reason": "\(error)"])
                    (activity, created) = try await connection.request(
                        type: type, attributes: attributes, content: content.raw,
                        key: key, ownerGone: .stale)
                }
                // Found by its key (a retry after a lost reply): what the daemon holds may be older.
                return .requested(
                    id: activity.id, ended: activity.state == .ended || activity.state == .dismissed,
                    content: created ? content : BridgedContent(activity.content))
            case .update(_, let id, let content):
                _ = try await connection.update(id: id, content: content.raw)
                return .updated
            case .end(_, let id, let content, let dismissal):
                let policy: ActivityUIDismissalPolicy =
                    switch dismissal {
                    case .immediate: .immediate
                    case .after(let date): .after(Date(timeIntervalSince1970: date))
                    }
                _ = try await connection.end(id: id, content: content?.raw, dismissalPolicy: policy)
                return .ended
            }
        } catch let error as ActivityAuthorizationError {
            return Self.outcome(of: error)
        } catch {
            return .unavailable
        }
    }

    /// Whether `error` refuses a request's `sourceApp` rather than the request: the producer
    /// may not speak for other apps, the app is not installed where islandd looks, or islandd
    /// does not know the parameter.
    static func refuses(_ sourceApp: String, _ error: ActivityAuthorizationError) -> Bool {
        switch error {
        case .permissionDenied(let role, _): role == "producer"
        case .unentitled(let app, _): app == sourceApp
        case .other(let name, let parameters):
            name == "org.varlink.service.InvalidParameter" && parameters["parameter"]?.stringValue == ProducerNames.Request.sourceApp
        default: false
        }
    }

    static func outcome(of error: ActivityAuthorizationError) -> ActivityBook.Outcome {
        switch error {
        case .daemonUnavailable: .unavailable
        case .denied: .refused(.denied)
        case .unentitled(_, let reason): .refused(.unentitled(reason))
        case .targetMaximumExceeded(_, let limit): .refused(.targetMaximum(limit: limit))
        case .globalMaximumExceeded(let limit): .refused(.globalMaximum(limit: limit))
        case .startBudgetExceeded(_, _, _, let retryAfter): .refused(.startBudget(retryAfter: retryAfter))
        case .noSuchActivity: .refused(.noSuchActivity)
        case .activityEnded: .refused(.activityEnded)
        default: .refused(.other(name: error.name, detail: error.description))
        }
    }
}

extension ActivityBook.Command {
    var ticket: ActivityBook.Ticket {
        switch self {
        case .request(let ticket, _, _, _, _), .update(let ticket, _, _), .end(let ticket, _, _, _): ticket
        }
    }
}

extension BridgedContent {
    init(_ content: RawActivityContent) {
        self.init(state: content.state, staleDate: content.staleDate, relevance: content.relevanceScore)
    }

    var raw: RawActivityContent {
        RawActivityContent(state: state, staleDate: staleDate, relevanceScore: relevance)
    }
}

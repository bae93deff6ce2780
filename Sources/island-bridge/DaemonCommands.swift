import Foundation
import IslandBridge
import IslandKit

/// The book's commands as calls to islandd (IslandKit), and what each call's outcome tells
/// the book.
extension ActivityBook.Command {
    /// Runs one of the book's commands against the daemon.
    func run(on connection: IslandConnection) async -> ActivityBook.Outcome {
        do {
            switch self {
            case .request(_, let key, let type, let attributes, let content):
                let (activity, created) = try await connection.request(type: type, attributes: attributes, content: content.raw,
                                                                       key: key, ownerGone: .stale)
                // Found by its key (a retry after a lost reply): what the daemon holds may be older.
                return .requested(id: activity.id, ended: activity.state == .ended || activity.state == .dismissed,
                                  content: created ? content : BridgedContent(activity.content))
            case .update(_, let id, let content):
                _ = try await connection.update(id: id, content: content.raw)
                return .updated
            case .end(_, let id, let content, let dismissal):
                let policy: ActivityUIDismissalPolicy = switch dismissal {
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

import Foundation
import KioskCore
import KioskSources

extension LibcameraCamera {
    /// Its details for the daemon, in a camera helper.
    public var helperDetails: Data {
        (try? JSONEncoder().encode(LibcameraHelperDetails(id: id, model: model, negotiation: negotiation,
                                                          controlLimits: controlLimits, version: LibcameraManager.version))) ?? Data()
    }

    /// Answers one of the daemon's calls, in a camera helper.
    public func answerHelperCall(_ payload: Data) -> Data {
        let answer: LibcameraHelperAnswer
        switch try? JSONDecoder().decode(LibcameraHelperCall.self, from: payload) {
        case .apply(let request)?: answer = .applied(apply(request))
        case .focus(let point, let continuous)?:
            let (plan, problem) = focus(at: point, continuous: continuous)
            answer = .focused(plan, problem: problem)
        case nil: answer = .applied([LibcameraControlPlan.Outcome(setting: "controls", problem: "the daemon's call was not understood")])
        }
        return (try? JSONEncoder().encode(answer)) ?? Data()
    }
}

/// The rules for a web user's password: long enough, and not one that every password
/// list starts with. The peers' worst hole is a default or guessable password on a
/// camera that faces the network.
public enum WebPasswordPolicy {
    public static let minimumLength = 10
    public static let maximumLength = 1024

    /// Why `password` is refused, or nil when it is acceptable.
    /// - Parameter user: The user's name: a password that contains it is refused too.
    public static func problem(with password: String, user: String) -> String? {
        let count = password.count
        if count < minimumLength {
            return "the password has \(count) characters; use at least \(minimumLength)"
        }
        if password.utf8.count > maximumLength {
            return "the password is longer than \(maximumLength) bytes"
        }
        if password.contains(where: { $0.isNewline || $0 == "\0" }) {
            return "the password contains a line break or a NUL character"
        }
        let lowered = password.lowercased()
        if commonPasswords.contains(lowered) {
            return "that password is on every list of common passwords; choose another"
        }
        if Set(lowered).count <= 2 {
            return "the password repeats one or two characters; choose another"
        }
        if !user.isEmpty, lowered.contains(user.lowercased()), user.count >= 3 {
            return "the password contains the user name; choose another"
        }
        return nil
    }

    /// Passwords of 10 characters or more from the top of public breach lists, and the
    /// factory passwords of camera makers (lower case; the check lowers the input).
    static let commonPasswords: Set<String> = [
        "1234567890", "0123456789", "12345678910", "1234567890a", "123456789a", "a123456789", "0987654321",
        "1111111111", "qwertyuiop", "1q2w3e4r5t", "1q2w3e4r5t6y", "q1w2e3r4t5", "qwerty1234", "qwerty12345",
        "qwerty123456", "1qaz2wsx3edc", "zaq12wsxcde3", "asdfghjkl1", "password12", "password123", "password1234",
        "passw0rd123", "p@ssw0rd123", "password!1", "iloveyou12", "iloveyou123", "football123", "baseball123",
        "princess123", "sunshine123", "welcome123", "welcome1234", "letmein123", "monkey1234", "dragon1234",
        "superman123", "trustno1234", "abc1234567", "abcd123456", "abcdefghij", "administrator", "admin12345",
        "admin123456", "adminadmin", "rootroot123", "changeme123", "changeme!!", "default123", "camera1234",
        "security123", "kioskcam123", "kioskcam1234", "raspberry1", "raspberrypi", "raspberry123", "hikvision1",
        "hikvision123", "dahua12345", "reolink123", "ubnt123456", "motioneye1", "frigate123", "homeassistant",
        "1234qwerty", "123qweasdzxc", "qweasdzxc123", "987654321a", "zxcvbnm123", "michael123", "jennifer123",
        "computer123", "starwars123", "whatever123", "internet123", "mustang1234", "shadow1234", "master1234",
        "killer1234", "jordan2323", "liverpool1", "chelsea123", "arsenal123", "pokemon123", "naruto1234",
        "samsung123", "google1234", "facebook123", "linkedin123", "myspace123", "secret1234", "freedom123",
        "summer2024", "summer2025", "summer2026", "winter2024", "winter2025", "winter2026", "spring2026",
        "autumn2026", "november2026", "december2026", "password2024", "password2025", "password2026",
    ]
}

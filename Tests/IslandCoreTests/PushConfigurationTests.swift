import IslandCore
import Testing

@Suite struct PushConfigurationTests {
    typealias Support = ConfigurationTestSupport

    @Test func withoutABrokerPushIsOff() throws {
        #expect(try Support.parse("").push.isEnabled == false)
        #expect(try Support.parse("[Push]\nClientID=kitchen").push.isEnabled == false)
        #expect(try Support.parse("[Push]\nBroker=mqtt://b\nBroker=").push.isEnabled == false, "an empty assignment undoes")
    }

    @Test func everyKeyIsRead() throws {
        let push = try Support.parse(
            """
            [Push]
            Broker=mqtts://broker.example:8883
            ClientID=kitchen-42
            TopicRoot=fleet/island
            CAFile=/etc/island/ca.pem
            CertificateFile=/etc/island/device.pem
            KeyFile=/etc/island/device.key
            Username=kitchen-42
            PasswordFile=/etc/island/push-password
            MQTTVersion=3.1.1
            KeepAliveSec=2min
            LinkHeadroom=8M
            SessionExpirySec=2d
            """
        ).push
        #expect(push.broker == "mqtts://broker.example:8883")
        #expect(push.clientID == "kitchen-42")
        #expect(push.topicRoot == "fleet/island")
        #expect(push.caFile == "/etc/island/ca.pem")
        #expect(push.certificateFile == "/etc/island/device.pem")
        #expect(push.keyFile == "/etc/island/device.key")
        #expect(push.username == "kitchen-42")
        #expect(push.passwordFile == "/etc/island/push-password")
        #expect(push.mqttVersion == "3.1.1")
        #expect(push.keepAlive == 120)
        #expect(push.linkHeadroom == 8 << 20)
        #expect(push.sessionExpiry == UInt32(2 * 86400))
    }

    /// The nodes of a cluster, in the order the daemon tries them.
    @Test func aBrokerMayBeSeveralNodes() throws {
        let push = try Support.parse("[Push]\nBroker=mqtt://node1:1883 mqtt://node2:1883").push
        #expect(push.broker == "mqtt://node1:1883 mqtt://node2:1883")
    }

    @Test func defaults() throws {
        let push = try Support.parse("[Push]\nBroker=mqtt://localhost").push
        #expect(push.topicRoot == "island")
        #expect(push.mqttVersion == "5")
        #expect(push.keepAlive == 60)
        #expect(push.clientID == nil)
        #expect(push.linkHeadroom == nil)
        #expect(push.sessionExpiry == UInt32(7 * 86400), "a week, not for ever")
        #expect(try Support.parse("[Push]\nBroker=mqtt://b\nSessionExpirySec=infinity").push.sessionExpiry == nil)
    }

    @Test func badValuesNameTheirLine() {
        Support.expectError(
            "[Push]\nBroker=http://x",
            "/etc/island/islandd.conf:2: invalid value 'http://x' for Broker=: expected mqtt://host[:port] or mqtts://host[:port], or several separated by spaces"
        )
        Support.expectError(
            "[Push]\nBroker=mqtt://a mqtt:/b",
            "/etc/island/islandd.conf:2: invalid value 'mqtt://a mqtt:/b' for Broker=: expected mqtt://host[:port] or mqtts://host[:port], or several separated by spaces"
        )
        Support.expectError(
            "[Push]\nClientID=a/b", "/etc/island/islandd.conf:2: invalid value 'a/b' for ClientID=: the client id contains '/', which MQTT topics reserve")
        Support.expectError(
            "[Push]\nClientID=dev+1", "/etc/island/islandd.conf:2: invalid value 'dev+1' for ClientID=: the client id contains '+', which MQTT topics reserve")
        Support.expectError(
            "[Push]\nTopicRoot=$SYS", "/etc/island/islandd.conf:2: invalid value '$SYS' for TopicRoot=: a root starting with '$' names a broker's own topics")
        Support.expectError("[Push]\nCAFile=ca.pem", "/etc/island/islandd.conf:2: invalid value 'ca.pem' for CAFile=: expected an absolute path")
        Support.expectError("[Push]\nMQTTVersion=4", "/etc/island/islandd.conf:2: invalid value '4' for MQTTVersion=: expected 5 or 3.1.1")
        Support.expectError(
            "[Push]\nKeepAliveSec=1", "/etc/island/islandd.conf:2: invalid value '1' for KeepAliveSec=: expected a time span from 5s to 18h (MQTT's limit)")
        Support.expectError("[Push]\nLinkHeadroom=512K", "/etc/island/islandd.conf:2: invalid value '512K' for LinkHeadroom=: expected a size from 1M to 1G")
        Support.expectError(
            "[Push]\nSessionExpirySec=10s",
            "/etc/island/islandd.conf:2: invalid value '10s' for SessionExpirySec=: expected a time span from 1min to 136y, or infinity")
        Support.expectError("[Push]\nLinkHeadroom=lots", "/etc/island/islandd.conf:2: invalid value 'lots' for LinkHeadroom=: expected a size from 1M to 1G")
        Support.expectError("[Push]\nBrokr=mqtt://x", "/etc/island/islandd.conf:2: unknown key 'Brokr=' in [Push]; did you mean 'Broker='?")
        Support.expectError(
            "[Psuh]",
            "/etc/island/islandd.conf:1: unknown section [Psuh]; did you mean [Push]? Sections are [Limits], [Daemon], [Push], [LockScreen], [LockScreen:<app-id>] and [App:<app-id>]"
        )
    }
}

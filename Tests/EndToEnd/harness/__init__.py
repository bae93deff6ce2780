"""What the end-to-end tests share: where the binaries are (`paths`), the processes a test
starts and stops (`processes`), an islandd on a socket of its own (`daemon`), the one Varlink
client (`varlink`), the `island` CLI and `island-presenter` (`cli`), and the real peers —
desktop sessions and compositors (`desktop`, `overlay_scenes`, `virtual_pointer`), a private
session bus with its players and notification daemons (`bus`), an MQTT broker (`broker`) and
network namespaces (`netns`)."""

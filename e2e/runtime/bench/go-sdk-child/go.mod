module example.com/bench

go 1.23

require plugin-host.dev/sdk-go v0.0.0

replace plugin-host.dev/sdk-go => ../../../../libs/plugin-sdk-go

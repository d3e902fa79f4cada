module example.com/bench

go 1.23

require plugin-host.dev/sdk-go/v2 v2.0.0

replace plugin-host.dev/sdk-go/v2 => ../../../../libs/plugin-sdk-go

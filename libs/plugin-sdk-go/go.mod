module plugin-host.dev/sdk-go/v2

go 1.23

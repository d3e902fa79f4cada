module plugin-host.dev/sdk-go

go 1.23

package hostsdk

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// Media is what UploadMedia answers (media.finish): put MediaID in a part with ImageFromMedia or
// FileFromMedia; the host keeps it for this plugin until ExpiresAt.
type Media = wire.MediaFinishResult

// UploadOption is an option of UploadMedia.
type UploadOption func(*uploadOptions)

type uploadOptions struct {
	fileName string
}

// WithFileName names the upload: a file part that names no FileName shows this name.
func WithFileName(name string) UploadOption {
	return func(o *uploadOptions) { o.fileName = name }
}

// mediaUploader is a transport that can send bytes to the host (stdio); over HTTP the plugin never calls
// the host, so its transports do not implement it.
type mediaUploader interface {
	upload(ctx context.Context, data []byte, contentType string, opts uploadOptions) (*Media, error)
}

// UploadMedia uploads bytes to the host for an image or file part (docs/protocol/v2.md 4.12): stdio only,
// with the media.upload permission. The SDK sends them in chunks of the size the host names (media.upload,
// media.chunk, media.finish), each after the answer to the one before, and gives up, between chunks or
// while it waits for an answer, when ctx ends (an *SDKError SDK_EVENT_CANCELLED wrapping ctx.Err()). The host takes at most wire.LimitMaxMediaUploadBytes bytes and wire.LimitMaxMediaUploadsPerMinute
// uploads a minute, images as PNG, JPEG, GIF or WebP whose first bytes match contentType, and keeps the id
// for an hour:
//
//	chart, err := ctx.UploadMedia(png, "image/png")
//	if err != nil {
//		return err
//	}
//	_, err = ctx.Reply(hostsdk.Text("today: "), hostsdk.ImageFromMedia(chart.MediaID))
//
// Before anything is sent it refuses, as a *MessageError, an upload without the permission
// (message.permission.denied), of no bytes (message.media.upload_invalid) or over the limit
// (message.media.too_large); over HTTP it fails with the *SDKError SDK_UPLOAD_UNAVAILABLE. The host's
// refusals are *MessageError with FromHost set and a message.media.* code.
func (c *Lifecycle) UploadMedia(data []byte, contentType string, opts ...UploadOption) (*Media, error) {
	uploader, ok := c.s.io.(mediaUploader)
	if !ok {
		return nil, sdkError(wire.ErrSDKUploadUnavailable, "send the image or file by URL (ImageFromURL, FileFromURL)")
	}
	if !c.s.plugin.hasPermission(wire.PermissionMediaUpload) {
		return nil, messageError(wire.CodeMessagePermissionDenied, nil,
			fmt.Sprintf("UploadMedia needs the %q permission, which manifest.json does not declare; add it to \"permissions\" and reinstall the plugin", wire.PermissionMediaUpload))
	}
	if len(data) == 0 {
		return nil, messageError(wire.CodeMessageMediaUploadInvalid, nil, "the upload has no bytes; the host takes 1 byte or more")
	}
	if len(data) > wire.LimitMaxMediaUploadBytes {
		return nil, messageError(wire.CodeMessageMediaTooLarge, nil,
			fmt.Sprintf("the upload has %d bytes; the host takes at most %d. Send a smaller file, or serve it from a URL", len(data), wire.LimitMaxMediaUploadBytes))
	}
	var o uploadOptions
	for _, opt := range opts {
		opt(&o)
	}
	return uploader.upload(c.Context, data, contentType, o)
}

// upload is media.upload, then the bytes in order in chunks of at most the size the host names, each sent
// after the answer to the one before, then media.finish.
func (rt *stdioRuntime) upload(ctx context.Context, data []byte, contentType string, opts uploadOptions) (*Media, error) {
	token := rt.token()
	if token == "" {
		return nil, sdkError(wire.ErrSDKNotInitialized, "media.upload cannot be sent before host.initialize")
	}
	var begun wire.MediaUploadResult
	params := wire.MediaUploadParams{Token: token, ContentType: contentType, Size: int64(len(data)), FileName: opts.fileName}
	if err := rt.callInto(ctx, wire.MethodMediaUpload, params, &begun); err != nil {
		return nil, err
	}
	step := min(max(begun.MaxChunkBytes, 1), wire.LimitMaxMediaChunkBytes)
	for offset := int64(0); offset < int64(len(data)); offset += step {
		chunk := data[offset:min(offset+step, int64(len(data)))]
		var got wire.MediaChunkResult
		p := wire.MediaChunkParams{Token: token, UploadID: begun.UploadID, Offset: offset, Data: base64.StdEncoding.EncodeToString(chunk)}
		if err := rt.callInto(ctx, wire.MethodMediaChunk, p, &got); err != nil {
			return nil, err
		}
	}
	var done Media
	if err := rt.callInto(ctx, wire.MethodMediaFinish, wire.MediaFinishParams{Token: token, UploadID: begun.UploadID}, &done); err != nil {
		return nil, err
	}
	return &done, nil
}

// callInto is a plugin-to-host request, abandoned when ctx ends first, whose answer decodes into result; a refusal with a message.* code
// is a *MessageError from the host.
func (rt *stdioRuntime) callInto(ctx context.Context, method string, params, result any) error {
	raw, err := rt.conn.request(callContext(ctx), method, params, rt.requestTimeout())
	if err != nil {
		return hostRefusal(err, nil)
	}
	if err := decodeInto(raw, result); err != nil {
		return &HostCallError{Method: method, Code: wire.RPCInternalError, Message: "the host's answer does not match " + method + ": " + err.Error()}
	}
	return nil
}

// hostRefusal turns a host's JSON-RPC error that names a message.* code (error.data.code) into a
// *MessageError; other errors are returned as they are.
func hostRefusal(err error, target *wire.Target) error {
	var hc *HostCallError
	if errors.As(err, &hc) && len(hc.Data) > 0 {
		var data struct {
			Code string `json:"code"`
		}
		if json.Unmarshal(hc.Data, &data) == nil && strings.HasPrefix(data.Code, "message.") {
			return &MessageError{Code: data.Code, Message: hc.Message, Target: target, FromHost: true}
		}
	}
	return err
}

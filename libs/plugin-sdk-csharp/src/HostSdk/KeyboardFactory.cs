namespace HostSdk.Wire;

public sealed partial record Keyboard
{
    /// <summary>
    /// Rows of buttons under a Markdown message: <c>Keyboard.Of([Buttons.Callback("Yes", "vote:yes"), Buttons.Callback("No",
    /// "vote:no")], [Buttons.Link("Rules", "https://example.com/rules")])</c>, sent with
    /// <c>ReplyMarkdownAsync(parts, keyboard)</c>. Checked at once against the protocol's limits: 1 to
    /// <see cref="Catalog.LimitMaxKeyboardRows"/> rows of 1 to <see cref="Catalog.LimitMaxKeyboardButtonsPerRow"/> buttons
    /// (<see cref="HostSdk.MessageException"/> message.keyboard.too_large), unique ids (message.keyboard.invalid).
    /// </summary>
    public static Keyboard Of(params Button[][] rows)
    {
        var keyboard = new Keyboard { Rows = rows.Select(r => new KeyboardRowsItem { Buttons = r }).ToList() };
        HostSdk.RichChecks.Normalize(keyboard, "markdown", null);
        return keyboard;
    }
}

import { useEffect, useId, useRef, type ReactNode } from 'react';

/**
 * A modal dialog on the platform's <dialog>: focus moves into it and is kept
 * there, Escape closes it, the page behind is inert, and it is announced with
 * its title. Escape calls `onClose`; the owner closes it by unmounting it or clearing `open`.
 */
export function Dialog({ open, title, onClose, children }: { open: boolean; title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal?.();
    if (!open && d.open) d.close?.();
  }, [open]);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(e) => {
        // Escape: the owner decides (and unmounts the dialog).
        e.preventDefault();
        onClose();
      }}
    >
      {open && (
        <>
          <h2 id={titleId}>{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}

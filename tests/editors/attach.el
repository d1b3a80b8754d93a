;; Emacs's own LSP client (eglot) attaches `tinker-lint server' to a file in batch mode and writes
;; the diagnostics flymake shows, one "TYPE LINE COLUMN TEXT" line each. The caller sets
;; TL_PYTHON, TL_FILE, TL_OUT and TL_EXPECTED in the environment.
(require 'eglot)
(setq eglot-server-programs
      `((python-mode . (,(getenv "TL_PYTHON") "-m" "tinker_lint" "server" "--stdio"))))
(find-file (getenv "TL_FILE"))
(python-mode)
;; eglot-ensure waits for the command loop, which batch mode never runs: connect now.
(apply #'eglot (eglot--guess-contact))
(let ((deadline (+ (float-time) 30))
      (expected (string-to-number (getenv "TL_EXPECTED"))))
  (while (and (< (float-time) deadline) (< (length (flymake-diagnostics)) expected))
    (accept-process-output nil 0.05)))
(let ((lines
       (mapcar (lambda (d)
                 (let ((beg (flymake-diagnostic-beg d)))
                   (format "%s %d %d %s" (flymake-diagnostic-type d) (line-number-at-pos beg)
                           (save-excursion (goto-char beg) (current-column))
                           (flymake-diagnostic-text d))))
               (sort (flymake-diagnostics)
                     (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))))
  (with-temp-file (getenv "TL_OUT") (insert (mapconcat #'identity lines "\n"))))
(eglot-shutdown (eglot-current-server))
(kill-emacs 0)
